#include "report/palette.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace difftx::report {
namespace {

struct Rgb {
  double r, g, b;
};

// Evenly spaced stops; t interpolates linearly between neighbours.
template <size_t N>
std::string ramp(const std::array<Rgb, N>& stops, double t) {
  t = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
  const double pos = t * (N - 1);
  const size_t i = std::min(static_cast<size_t>(pos), N - 2);
  const double f = pos - static_cast<double>(i);
  const auto mix = [&](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g),
                mix(stops[i].b, stops[i + 1].b));
  return hex;
}

// matplotlib's viridis sampled at 0, 1/8, ..., 1.
constexpr std::array<Rgb, 9> kViridis = {{{68, 1, 84},
                                          {72, 40, 120},
                                          {62, 73, 137},
                                          {49, 104, 142},
                                          {38, 130, 142},
                                          {31, 158, 137},
                                          {53, 183, 121},
                                          {110, 206, 88},
                                          {253, 231, 37}}};

// ColorBrewer's sequential Blues.
constexpr std::array<Rgb, 5> kBlues = {
    {{247, 251, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107}}};

}  // namespace

std::string category_colour(size_t i) {
  static const char* kOkabeIto[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#F0E442", "#000000"};
  return kOkabeIto[i % 8];
}

std::string viridis(double t) { return ramp(kViridis, t); }
std::string blues(double t) { return ramp(kBlues, t); }

std::string text_colour_on(const std::string& background) {
  unsigned r = 0, g = 0, b = 0;
  if (std::sscanf(background.c_str(), "#%02x%02x%02x", &r, &g, &b) != 3) return "#222222";
  const double luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255.0;  // Rec. 709 weights
  return luminance > 0.5 ? "#222222" : "#ffffff";
}

}  // namespace difftx::report
