#include "kai/core/whatif/svg.h"

#include <cmath>
#include <cstdio>

namespace kai::whatif {

std::string EscapeXml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string TickLabel(double v) {
  char buf[32];
  if (std::fabs(v) >= 10000) {
    std::snprintf(buf, sizeof buf, "%.3gk", v / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

namespace {

struct Frame {
  int width, height;
  int left = 64, right = 150, top = 28, bottom = 44;
  double x_max, y_max;
  double X(double x) const { return left + (width - left - right) * (x_max > 0 ? x / x_max : 0); }
  double Y(double y) const {
    return height - bottom - (height - top - bottom) * (y_max > 0 ? y / y_max : 0);
  }
};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Text(double x, double y, const std::string& s, const char* anchor,
                 const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"11\"" + extra + ">" + EscapeXml(s) + "</text>";
}

std::string Axes(const LineChart& c, const Frame& f) {
  std::string s;
  const double x0 = f.X(0), x1 = f.X(f.x_max), y0 = f.Y(0), y1 = f.Y(f.y_max);
  for (int i = 0; i <= 5; ++i) {
    const double yv = f.y_max * i / 5, xv = f.x_max * i / 5;
    s += "<line x1=\"" + Num(x0) + "\" x2=\"" + Num(x1) + "\" y1=\"" + Num(f.Y(yv)) + "\" y2=\"" +
         Num(f.Y(yv)) + "\" stroke=\"#ddd\"/>";
    s += Text(x0 - 6, f.Y(yv) + 4, TickLabel(yv), "end");
    s += "<line x1=\"" + Num(f.X(xv)) + "\" x2=\"" + Num(f.X(xv)) + "\" y1=\"" + Num(y0) +
         "\" y2=\"" + Num(y0 + 4) + "\" stroke=\"#333\"/>";
    s += Text(f.X(xv), y0 + 16, TickLabel(xv), "middle");
  }
  s += "<line x1=\"" + Num(x0) + "\" x2=\"" + Num(x1) + "\" y1=\"" + Num(y0) + "\" y2=\"" +
       Num(y0) + "\" stroke=\"#333\"/>";
  s += "<line x1=\"" + Num(x0) + "\" x2=\"" + Num(x0) + "\" y1=\"" + Num(y0) + "\" y2=\"" +
       Num(y1) + "\" stroke=\"#333\"/>";
  s += Text((x0 + x1) / 2, f.height - 8, c.x_label, "middle", " class=\"x-label\"");
  s += Text(14, (y0 + y1) / 2, c.y_label, "middle",
            " class=\"y-label\" transform=\"rotate(-90 14 " + Num((y0 + y1) / 2) + ")\"");
  s += Text(x0, 16, c.title, "start", " font-weight=\"bold\" font-size=\"13\"");
  return s;
}

std::string Polyline(const Series& se, const Frame& f) {
  std::string pts;
  for (const auto& [x, y] : se.points) pts += Num(f.X(x)) + "," + Num(f.Y(y)) + " ";
  return "<polyline fill=\"none\" stroke=\"" + se.colour + "\" stroke-width=\"1.6\"" +
         (se.dashed ? " stroke-dasharray=\"5 3\"" : "") + " points=\"" + pts + "\"/>";
}

std::string Legend(const LineChart& c, const Frame& f) {
  std::string s;
  const double x = f.width - f.right + 10;
  for (size_t i = 0; i < c.series.size(); ++i) {
    const double y = f.top + 8 + 16.0 * static_cast<double>(i);
    s += "<line x1=\"" + Num(x) + "\" x2=\"" + Num(x + 18) + "\" y1=\"" + Num(y) + "\" y2=\"" +
         Num(y) + "\" stroke=\"" + c.series[i].colour + "\" stroke-width=\"2\"" +
         (c.series[i].dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
    s += Text(x + 22, y + 4, c.series[i].name, "start");
  }
  return s;
}

}  // namespace

std::string RenderSvg(const LineChart& c, int width, int height) {
  const Frame f{.width = width, .height = height, .x_max = c.x_max, .y_max = c.y_max};
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                  std::to_string(width) + " " + std::to_string(height) +
                  "\" font-family=\"sans-serif\" role=\"img\"><title>" + EscapeXml(c.title) +
                  "</title><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>";
  s += Axes(c, f);
  for (const Series& se : c.series) s += Polyline(se, f);
  s += Legend(c, f);
  return s + "</svg>";
}

}  // namespace kai::whatif
