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

namespace {

// The ids of one needle: lead ("The KEY is ") | value | end.
struct NeedleIds {
  std::vector<int32_t> lead, value, all;
};

// Offsets in a haystack of H tokens: the queried needles (draw index i < R) together at
// depth_offset in a random order, the others anywhere. Returns the draw indices in sequence order.
std::vector<int64_t> place_needles(Rng& rng, std::vector<NiahNeedle>& needles, int64_t R, int64_t depth_offset,
                                   int64_t H) {
  const int64_t N = static_cast<int64_t>(needles.size());
  const std::vector<int64_t> queried_order = shuffled(rng, R);
  std::vector<std::pair<int64_t, int64_t>> placed;  // (offset, rank among equal offsets), by needle
  for (int64_t i = 0; i < N; ++i) {
    needles[i].haystack_offset = i < R ? depth_offset : static_cast<int64_t>(rng.below(H + 1));
    placed.push_back({needles[i].haystack_offset, i < R ? queried_order[i] : R + i});
  }
  std::vector<int64_t> order(N);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return placed[a] < placed[b]; });
  return order;
}

// Appends the haystack with the needles at their offsets, in `order`; sets their spans and puts
// `needles` in sequence order. Returns draw index -> index in sequence order.
std::vector<int64_t> weave_needles(std::vector<int32_t>& t, const std::vector<int32_t>& hay,
                                   const std::vector<int64_t>& order, const std::vector<NeedleIds>& ids,
                                   std::vector<NiahNeedle>& needles) {
  int64_t hay_done = 0;
  std::vector<NiahNeedle> in_order;
  std::vector<int64_t> position_of(needles.size());
  for (int64_t i : order) {
    NiahNeedle n = needles[i];
    t.insert(t.end(), hay.begin() + hay_done, hay.begin() + n.haystack_offset);
    hay_done = n.haystack_offset;
    n.needle.begin = static_cast<int64_t>(t.size());
    n.value_span.begin = n.needle.begin + static_cast<int64_t>(ids[i].lead.size());
    n.value_span.end = n.value_span.begin + static_cast<int64_t>(ids[i].value.size());
    t.insert(t.end(), ids[i].all.begin(), ids[i].all.end());
    n.needle.end = static_cast<int64_t>(t.size());
    position_of[i] = static_cast<int64_t>(in_order.size());
    in_order.push_back(std::move(n));
  }
  t.insert(t.end(), hay.begin() + hay_done, hay.end());
  needles = std::move(in_order);
  return position_of;
}

}  // namespace

NiahSample NiahGenerator::sample(const NiahSpec& s, uint64_t seed) const {
  validate(s);
  Rng rng(seed);
  const int64_t N = s.needles, R = s.queried;
  const int64_t lowest = value_count(s.value_digits) / 9;  // 10^(digits-1)
  std::vector<int64_t> keys = shuffled(rng, static_cast<int64_t>(kKeys.size()));
  keys.resize(N);
  const std::vector<int64_t> values = draw_distinct(rng, value_count(s.value_digits), N);

  // Needle i of the draw is queried when i < R.
  NiahSample out;
  std::vector<NeedleIds> ids(N);
  int64_t task = static_cast<int64_t>(intro_.size());
  out.needles.resize(N);
  for (int64_t i = 0; i < N; ++i) {
    NiahNeedle& n = out.needles[i];
    n.key = kKeys[keys[i]];
    n.value = std::to_string(lowest + values[i]);
    n.queried = i < R;
    ids[i].lead = lead_[keys[i]];
    ids[i].value = tokenizer_.encode(n.value);
    ids[i].all = ids[i].lead;
    ids[i].all.insert(ids[i].all.end(), ids[i].value.begin(), ids[i].value.end());
    ids[i].all.insert(ids[i].all.end(), end_.begin(), end_.end());
    task += static_cast<int64_t>(ids[i].all.size()) * (n.queried ? 2 : 1);
  }
  const int64_t H = s.context - task;  // >= 1 by validate()
  out.haystack_tokens = H;
  out.haystack_start = static_cast<int64_t>(rng.below(static_cast<uint64_t>(haystack_.tokens() - H + 1)));
  std::vector<int32_t> hay(H);
  haystack_.copy(out.haystack_start, H, hay.data());

  const int64_t depth_offset = std::llround(s.depth * static_cast<double>(H));
  const std::vector<int64_t> order = place_needles(rng, out.needles, R, depth_offset, H);
  std::vector<int32_t>& t = out.tokens;
  t.reserve(s.context);
  const std::vector<int64_t> position_of = weave_needles(t, hay, order, ids, out.needles);

  // The query block asks for the queried needles in a fresh random order.
  t.insert(t.end(), intro_.begin(), intro_.end());
  for (int64_t i : shuffled(rng, R)) {
    NiahQuery q;
    q.needle = position_of[i];
    t.insert(t.end(), ids[i].lead.begin(), ids[i].lead.end());
    q.answer.begin = static_cast<int64_t>(t.size());
    t.insert(t.end(), ids[i].value.begin(), ids[i].value.end());
    q.answer.end = static_cast<int64_t>(t.size());
    t.insert(t.end(), end_.begin(), end_.end());
    out.queries.push_back(q);
  }
  DIFFTX_CHECK(static_cast<int64_t>(t.size()) == s.context, "NIAH: internal error: built ", t.size(),
               " tokens for a context of ", s.context);
  return out;
}

}  // namespace difftx::retrieval
