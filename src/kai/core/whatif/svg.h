#pragma once
// Line charts as inline SVG (no script, no external file): labelled axes with ticks, a legend.
#include <string>
#include <vector>

namespace kai::whatif {

struct Series {
  std::string name, colour;
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct LineChart {
  std::string title, x_label, y_label;
  double x_max = 1, y_max = 1;  // the axes run from 0
  std::vector<Series> series;
};

// The chart as one <svg> element (width x height pixels).
std::string RenderSvg(const LineChart& chart, int width = 720, int height = 300);

// Escapes text for HTML and SVG.
std::string EscapeXml(const std::string& s);

// A tick label: at most three significant digits ("0", "2.5", "120", "1.2k").
std::string TickLabel(double v);

}  // namespace kai::whatif
