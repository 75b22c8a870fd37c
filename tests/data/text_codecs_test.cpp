// UTF-8 validation, base64 and SHA-256 against their standards' examples and edge cases.
#include <gtest/gtest.h>

#include "core/error.h"
#include "data/base64.h"
#include "data/sha256.h"
#include "data/utf8.h"
#include "data_fixtures.h"

namespace difftx::data {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
  for (std::string s : {"", "plain ascii", "Straße", "日本語", "🐳 emoji", "\xF4\x8F\xBF\xBF",
                        "\xEF\xBF\xBF", "\xED\x9F\xBF"}) {
    EXPECT_EQ(valid_utf8_prefix(s), s.size()) << s;
    EXPECT_NO_THROW(check_utf8(s, "x"));
  }
  Rng rng(1);
  for (int i = 0; i < 50; ++i) {
    const std::string s = testing::random_text(rng, 300);
    EXPECT_EQ(valid_utf8_prefix(s), s.size());
  }
}

TEST(Utf8, FindsTheFirstBadByte) {
  struct Case {
    std::string text;
    size_t bad;
  };
  const Case cases[] = {
      {"abc\x80", 3},                   // lone continuation byte
      {"ab\xC0\xAF", 2},                // overlong '/'
      {"\xC1\xBF", 0},                  // overlong
      {"\xE0\x80\xAF", 0},              // overlong 3-byte
      {"\xF0\x80\x80\xAF", 0},          // overlong 4-byte
      {"ok\xED\xA0\x80", 2},            // surrogate U+D800
      {"\xF4\x90\x80\x80", 0},          // above U+10FFFF
      {"\xF5\x80\x80\x80", 0},          // invalid lead byte
      {"\xFF", 0},                      //
      {"12345678\xE6\x97", 8},          // truncated at the end (after the 8-byte fast path)
      {"caf\xC3", 3},                   // truncated 2-byte
      {"\xE6\x97\xA5\xE6(", 3},         // bad continuation
  };
  for (const Case& c : cases) {
    EXPECT_EQ(valid_utf8_prefix(c.text), c.bad) << ::testing::PrintToString(c.text);
    try {
      check_utf8(c.text, "input.txt");
      ADD_FAILURE() << "accepted " << ::testing::PrintToString(c.text);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("input.txt: invalid UTF-8 at byte offset " +
                                           std::to_string(c.bad)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Base64, RoundTripsAndMatchesRfc4648Examples) {
  const std::pair<std::string, std::string> rfc[] = {{"", ""},         {"f", "Zg=="},
                                                     {"fo", "Zm8="},   {"foo", "Zm9v"},
                                                     {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                     {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : rfc) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), plain);
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(base64_decode(base64_encode(all)), all);
}

TEST(Base64, RejectsMalformedText) {
  for (std::string bad : {"Zg=", "Zg", "Z===", "Zm9v!A==", "Zg==Zg==", "Zh==", "Zm9=", "=Zg=",
                          "Zm 9", "Zg==\n"})
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
}

TEST(Sha256, MatchesFips180Examples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a', fed in uneven chunks to exercise the block buffer.
  Sha256 h;
  const std::string chunk(997, 'a');
  size_t fed = 0;
  while (fed + chunk.size() <= 1000000) h.update(chunk), fed += chunk.size();
  h.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace difftx::data
