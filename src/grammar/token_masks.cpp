#include "grammar/token_masks.h"

namespace difftx::grammar {

TokenMasks::TokenMasks(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                       std::vector<int32_t> controls, int64_t max_cache_bytes, AutomatonLimits limits)
    : automaton_(std::move(grammar), limits),
      vocabulary_(std::move(vocabulary)),
      controls_(std::move(controls)),
      max_cache_bytes_(max_cache_bytes) {
  DIFFTX_CHECK(static_cast<int>(controls_.size()) <= kMaxControls, "token masks: ", controls_.size(),
               " control tokens; a grammar writes at most ", kMaxControls);
  for (int32_t id : controls_)
    DIFFTX_CHECK(id >= 0 && id < vocabulary_->size(), "token masks: control token ", id, " is outside the vocabulary");
  for (size_t i = 0; i < controls_.size(); ++i) control_bytes_.push_back(static_cast<char>(kFirstControlByte + i));
}

std::shared_ptr<TokenMasks> TokenMasks::fresh(int64_t max_cache_bytes, AutomatonLimits limits) const {
  return std::make_shared<TokenMasks>(automaton_.shared_grammar(), vocabulary_, controls_, max_cache_bytes, limits);
}

std::string_view TokenMasks::text_of(int32_t id) const {
  for (size_t i = 0; i < controls_.size(); ++i)
    if (controls_[i] == id) return std::string_view(control_bytes_).substr(i, 1);
  return vocabulary_->bytes(id);
}

std::shared_ptr<const TokenMasks::Mask> TokenMasks::allowed(Automaton::State s) {
  std::lock_guard lock(mutex_);
  if (const auto it = cache_.find(s); it != cache_.end()) return it->second;
  auto mask = std::make_shared<Mask>(static_cast<size_t>(vocabulary_->words()), 0);
  automaton_.locked([&](auto step) {
    vocabulary_->walk(s, step, mask->data());
    for (size_t i = 0; i < controls_.size(); ++i)
      if (step(s, static_cast<uint8_t>(control_bytes_[i])) >= 0)
        (*mask)[controls_[i] >> 6] |= uint64_t{1} << (controls_[i] & 63);
    return 0;
  });
  const int64_t bytes = static_cast<int64_t>(mask->size() * sizeof(uint64_t));
  if (static_cast<int64_t>(cache_.size() + 1) * bytes > max_cache_bytes_) cache_.clear();
  cache_.emplace(s, mask);
  return mask;
}

}  // namespace difftx::grammar
