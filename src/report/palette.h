// Colours that colour-blind readers can tell apart: Okabe & Ito's eight for categories
// (models), viridis and a single-hue blue ramp for magnitudes.
#pragma once
#include <string>

namespace difftx::report {

// The i-th category colour as "#rrggbb" (blue, vermillion, bluish green, reddish purple,
// orange, sky blue, yellow, black), cycling after eight.
std::string category_colour(size_t i);

// t in [0, 1] (clamped) along viridis (dark purple -> yellow), for accuracies.
std::string viridis(double t);
// t in [0, 1] (clamped) from near-white to dark blue, for attention weights.
std::string blues(double t);

// Dark or white text, whichever reads better on `background` ("#rrggbb").
std::string text_colour_on(const std::string& background);

// The colour of missing data (NaN cells).
inline const char* kMissingColour = "#d9d9d9";

}  // namespace difftx::report
