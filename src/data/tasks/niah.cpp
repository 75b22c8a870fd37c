#include "data/tasks/niah.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"
#include "data/tasks/random_draws.h"

namespace difftx::retrieval {
namespace {

constexpr std::array<std::string_view, 48> kKeys = {
    "river",  "silver", "gold",   "coal",   "iron",    "cotton", "ship",     "forest", "ocean",  "mountain",
    "island", "harbor", "army",   "navy",   "farm",    "bank",   "road",     "school", "market", "city",
    "steel",  "sugar",  "oil",    "timber", "cattle",  "bread",  "water",    "fire",   "paper",  "letter",
    "winter", "summer", "spring", "morning", "north",  "south",  "east",     "west",   "desert", "canal",
    "railroad", "engine", "door", "table",  "bear",    "rose",   "compass",  "frontier"};

// Distinct values of `digits` digits without a leading zero: [10^(digits-1), 10^digits).
int64_t value_count(int digits) {
  int64_t lowest = 1;
  for (int i = 1; i < digits; ++i) lowest *= 10;
  return 9 * lowest;
}

}  // namespace

std::span<const std::string_view> needle_keys() { return kKeys; }

NiahGenerator::NiahGenerator(const data::Tokenizer& tokenizer, const data::SplitReader& haystack)
    : tokenizer_(tokenizer), haystack_(haystack) {
  DIFFTX_CHECK(tokenizer.vocab_size() <= haystack.dataset().vocab_size, "tokenizer ", tokenizer.name(), " has ",
               tokenizer.vocab_size(), " tokens but the dataset in ", haystack.dataset().dir.string(), " has ",
               haystack.dataset().vocab_size, ": they do not belong together");
  for (std::string_view key : kKeys)
    lead_.push_back(tokenizer.encode(std::string(kNeedleLead) + std::string(key) + kNeedleMiddle));
  end_ = tokenizer.encode(kNeedleEnd);
  intro_ = tokenizer.encode(kQueryIntro);
}

int64_t NiahGenerator::max_task_tokens(int64_t needles, int64_t queried, int value_digits) const {
  std::vector<int64_t> sizes;
  for (const auto& lead : lead_) sizes.push_back(static_cast<int64_t>(lead.size()));
  std::sort(sizes.rbegin(), sizes.rend());
  const int64_t per_needle = value_digits + static_cast<int64_t>(end_.size());
  const int64_t n = std::min<int64_t>(needles, static_cast<int64_t>(sizes.size()));
  const int64_t r = std::min(queried, n);
  return std::accumulate(sizes.begin(), sizes.begin() + n, int64_t{0}) + n * per_needle +
         static_cast<int64_t>(intro_.size()) + std::accumulate(sizes.begin(), sizes.begin() + r, int64_t{0}) +
         r * per_needle;
}

void NiahGenerator::validate(const NiahSpec& s) const {
  const int64_t keys = static_cast<int64_t>(kKeys.size());
  DIFFTX_CHECK(s.needles >= 1 && s.needles <= keys, "NIAH: needles N = ", s.needles, " must be in [1, ", keys,
               "] (there are ", keys, " keys)");
  DIFFTX_CHECK(s.queried >= 1 && s.queried <= s.needles, "NIAH: queried R = ", s.queried, " must be in [1, N = ",
               s.needles, "]");
  DIFFTX_CHECK(s.depth >= 0 && s.depth <= 1, "NIAH: depth ", s.depth, " must be in [0, 1]");
  DIFFTX_CHECK(s.value_digits >= 1 && s.value_digits <= 9, "NIAH: value digits ", s.value_digits,
               " must be in [1, 9]");
  DIFFTX_CHECK(value_count(s.value_digits) >= s.needles, "NIAH: ", s.value_digits, "-digit values have only ",
               value_count(s.value_digits), " distinct values, fewer than N = ", s.needles);
  const int64_t task = max_task_tokens(s.needles, s.queried, s.value_digits);
  DIFFTX_CHECK(s.context > task, "NIAH: context ", s.context, " is too short for N = ", s.needles, " needles and R = ",
               s.queried, " queries: with ", s.value_digits, "-digit values they take up to ", task,
               " tokens, so the context must be at least ", task + 1, " to leave a haystack");
  DIFFTX_CHECK(haystack_.tokens() >= s.context - task, haystack_.dataset().dir.string(), ": split '",
               haystack_.split(), "' holds ", haystack_.tokens(), " tokens, fewer than the haystack of up to ",
               s.context - task, " tokens a context of ", s.context, " needs");
}

NiahSample NiahGenerator::sample(const NiahSpec& s, uint64_t seed) const {
  validate(s);
  Rng rng(seed);
  const int64_t N = s.needles, R = s.queried;
  const int64_t lowest = value_count(s.value_digits) / 9;  // 10^(digits-1)
  std::vector<int64_t> keys = shuffled(rng, static_cast<int64_t>(kKeys.size()));
  keys.resize(N);
  const std::vector<int64_t> values = draw_distinct(rng, value_count(s.value_digits), N);

  // Needle i of the draw is queried when i < R; its ids are lead | value | end.
  NiahSample out;
  std::vector<std::vector<int32_t>> value_ids(N), needle_ids(N);
  int64_t task = static_cast<int64_t>(intro_.size());
  out.needles.resize(N);
  for (int64_t i = 0; i < N; ++i) {
    NiahNeedle& n = out.needles[i];
    n.key = kKeys[keys[i]];
    n.value = std::to_string(lowest + values[i]);
    n.queried = i < R;
    value_ids[i] = tokenizer_.encode(n.value);
    const auto& lead = lead_[keys[i]];
    needle_ids[i] = lead;
    needle_ids[i].insert(needle_ids[i].end(), value_ids[i].begin(), value_ids[i].end());
    needle_ids[i].insert(needle_ids[i].end(), end_.begin(), end_.end());
    task += static_cast<int64_t>(needle_ids[i].size()) * (n.queried ? 2 : 1);
  }
  const int64_t H = s.context - task;  // >= 1 by validate()
  out.haystack_tokens = H;
  out.haystack_start = static_cast<int64_t>(rng.below(static_cast<uint64_t>(haystack_.tokens() - H + 1)));
  std::vector<int32_t> hay(H);
  haystack_.copy(out.haystack_start, H, hay.data());

  // Offsets: the queried needles together at round(depth H) in a random order, the others anywhere.
  const int64_t depth_offset = std::llround(s.depth * static_cast<double>(H));
  const std::vector<int64_t> queried_order = shuffled(rng, R);
  std::vector<std::pair<int64_t, int64_t>> placed;  // (offset, rank among equal offsets), by needle
  for (int64_t i = 0; i < N; ++i) {
    out.needles[i].haystack_offset = i < R ? depth_offset : static_cast<int64_t>(rng.below(H + 1));
    placed.push_back({out.needles[i].haystack_offset, i < R ? queried_order[i] : R + i});
  }
  std::vector<int64_t> order(N);  // needle indices in sequence order
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return placed[a] < placed[b]; });

  std::vector<int32_t>& t = out.tokens;
  t.reserve(s.context);
  int64_t hay_done = 0;
  std::vector<NiahNeedle> in_order;
  std::vector<int64_t> position_of(N);  // draw index -> index in sequence order
  for (int64_t i : order) {
    NiahNeedle n = out.needles[i];
    t.insert(t.end(), hay.begin() + hay_done, hay.begin() + n.haystack_offset);
    hay_done = n.haystack_offset;
    n.needle.begin = static_cast<int64_t>(t.size());
    n.value_span.begin = n.needle.begin + static_cast<int64_t>(lead_[keys[i]].size());
    n.value_span.end = n.value_span.begin + static_cast<int64_t>(value_ids[i].size());
    t.insert(t.end(), needle_ids[i].begin(), needle_ids[i].end());
    n.needle.end = static_cast<int64_t>(t.size());
    position_of[i] = static_cast<int64_t>(in_order.size());
    in_order.push_back(std::move(n));
  }
  t.insert(t.end(), hay.begin() + hay_done, hay.end());

  // The query block asks for the queried needles in a fresh random order.
  t.insert(t.end(), intro_.begin(), intro_.end());
  for (int64_t i : shuffled(rng, R)) {
    NiahQuery q;
    q.needle = position_of[i];
    const auto& lead = lead_[keys[i]];
    t.insert(t.end(), lead.begin(), lead.end());
    q.answer.begin = static_cast<int64_t>(t.size());
    t.insert(t.end(), value_ids[i].begin(), value_ids[i].end());
    q.answer.end = static_cast<int64_t>(t.size());
    t.insert(t.end(), end_.begin(), end_.end());
    out.queries.push_back(q);
  }
  out.needles = std::move(in_order);
  DIFFTX_CHECK(static_cast<int64_t>(t.size()) == s.context, "NIAH: internal error: built ", t.size(),
               " tokens for a context of ", s.context);
  return out;
}

}  // namespace difftx::retrieval
