#pragma once
// The what-if generator's random source: std::mt19937_64 (whose sequence the standard fixes) with
// distributions written here, because libstdc++'s std::*_distribution may change their output
// between versions and a seeded trace must stay the same trace.
#include <cmath>
#include <cstdint>
#include <random>

namespace kai::whatif {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1): the top 53 bits of one draw.
  double Uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi] (hi >= lo), by rejection so that it is exactly uniform.
  int64_t UniformInt(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<int64_t>(engine_());
    const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return lo + static_cast<int64_t>(x % span);
  }

  // Exponential with the given mean (inversion).
  double Exponential(double mean) { return -mean * std::log1p(-Uniform01()); }

  // Log-normal whose median is `median` and whose log has standard deviation `sigma`
  // (Box-Muller, one normal per call).
  double LogNormal(double median, double sigma) {
    const double u1 = 1.0 - Uniform01();  // (0, 1]
    const double u2 = Uniform01();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    return median * std::exp(sigma * z);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kai::whatif
