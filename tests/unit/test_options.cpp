// Parsing of the command line's values: the accepted forms, and a UsageError naming the bad
// token for everything else.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "cli/options.hpp"
#include "support/assertions.hpp"

namespace gemmlab::cli {
namespace {

using testing::contains;

// The message of the UsageError `parse` throws; a failure when it throws none.
std::string usage_error_of(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const UsageError& e) {
    return e.message;
  }
  ADD_FAILURE() << "no UsageError thrown";
  return {};
}

void expect_shape(const bench::Shape& s, std::int64_t m, std::int64_t n, std::int64_t k) {
  EXPECT_EQ(s.m, m);
  EXPECT_EQ(s.n, n);
  EXPECT_EQ(s.k, k);
}

TEST(ParseSizes, TurnsEachSizeIntoASquareShape) {
  const auto shapes = parse_sizes("64,1000,1,0");
  ASSERT_EQ(shapes.size(), 4u);
  expect_shape(shapes[0], 64, 64, 64);
  expect_shape(shapes[1], 1000, 1000, 1000);
  expect_shape(shapes[2], 1, 1, 1);
  expect_shape(shapes[3], 0, 0, 0);
  expect_shape(parse_sizes("2147483647")[0], 2147483647, 2147483647, 2147483647);
}

TEST(ParseSizes, NamesTheBadToken) {
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("abc"); }), "'abc'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("64,abc,128"); }), "'abc'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("-5"); }), "'-5'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("-5"); }), "negative"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("12x"); }), "'12x'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("1.5"); }), "'1.5'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("+7"); }), "'+7'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("2147483648"); }), "'2147483648'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("99999999999999999999999"); }),
                       "'99999999999999999999999'"));
  // An empty token: the message quotes it and the whole list.
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("64,,128"); }), "'' in '64,,128'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes(""); }), "''"));
}

TEST(ParseMnk, ReadsEachShape) {
  const auto shapes = parse_mnk("1000x513x77,64x64x1,0x3x2");
  ASSERT_EQ(shapes.size(), 3u);
  expect_shape(shapes[0], 1000, 513, 77);
  expect_shape(shapes[1], 64, 64, 1);
  expect_shape(shapes[2], 0, 3, 2);
}

TEST(ParseMnk, NamesTheBadToken) {
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("1x2"); }), "'1x2'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("8x8x8,1x2x3x4"); }), "'1x2x3x4'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("8X8X8"); }), "'8X8X8'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("1xax3"); }), "'a' in '1xax3'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("4x-1x3"); }), "'-1' in '4x-1x3'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("4xx3"); }), "'4xx3'"));
}

TEST(ParseNames, SplitsOnCommas) {
  const auto names = parse_names("naive,openblas_sgemm");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "naive");
  EXPECT_EQ(names[1], "openblas_sgemm");
  EXPECT_EQ(parse_names("naive").size(), 1u);
}

TEST(ParseNames, RejectsAnEmptyName) {
  EXPECT_TRUE(contains(usage_error_of([] { parse_names("naive,,openblas_sgemm"); }), "'naive,,openblas_sgemm'"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_names("naive,"); }), "empty name"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_names(""); }), "--variants '' is empty"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_names("", "--experiments"); }), "--experiments"));
}

TEST(ParseNames, RejectsANameGivenTwice) {
  EXPECT_TRUE(contains(usage_error_of([] { parse_names("naive,threaded,naive"); }), "'naive' twice"));
}

TEST(ParseSizes, RejectsAnEmptyListAndRepeats) {
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes(""); }), "--sizes '' is empty"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_sizes("64,128,64"); }), "64 twice"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk(""); }), "--mnk '' is empty"));
  EXPECT_TRUE(contains(usage_error_of([] { parse_mnk("2x3x4,2x3x4"); }), "2x3x4 twice"));
  EXPECT_EQ(parse_mnk("2x3x4,4x3x2").size(), 2u);  // the same numbers in another order are another shape
}

TEST(ParseScalar, TakesFiniteFloat32Magnitudes) {
  EXPECT_EQ(parse_scalar("--alpha", "0.5"), 0.5);
  EXPECT_EQ(parse_scalar("--alpha", "-2"), -2.0);
  EXPECT_EQ(parse_scalar("--alpha", "0x1p3"), 8.0);
  EXPECT_EQ(parse_scalar("--beta", "3.4e38"), 3.4e38);
  EXPECT_EQ(parse_scalar("--beta", "0"), 0.0);
}

TEST(ParseScalar, NamesTheFlagAndTheRange) {
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e39", "-1e39", "1e400", "", "abc", "1.5x", " 1", "1,5"}) {
    const std::string message = usage_error_of([&] { parse_scalar("--alpha", bad); });
    EXPECT_TRUE(contains(message, "--alpha")) << bad << ": " << message;
    EXPECT_TRUE(contains(message, "3.403e+38")) << bad << ": " << message;
  }
}

TEST(ParseSeed, TakesEverySixtyFourBitValue) {
  EXPECT_EQ(parse_seed("0"), 0u);
  EXPECT_EQ(parse_seed("18446744073709551615"), 18446744073709551615u);
  for (const char* bad : {"-5", "18446744073709551616", "99999999999999999999999", "", "1.0", "+3", "0x10", "7 "}) {
    const std::string message = usage_error_of([&] { parse_seed(bad); });
    EXPECT_TRUE(contains(message, "--seed")) << bad;
    EXPECT_TRUE(contains(message, "18446744073709551615")) << bad;
  }
}

TEST(QuoteCommandLine, QuotesWhatAShellWouldSplit) {
  EXPECT_EQ(quote_command_line({"gemmlab", "bench", "--sizes", "64,128"}), "gemmlab bench --sizes 64,128");
  EXPECT_EQ(quote_command_line({"gemmlab", "--output", "my run.json", ""}), "gemmlab --output 'my run.json' ''");
  EXPECT_EQ(quote_command_line({"it's"}), "'it'\\''s'");
}

TEST(ParseTrans, ReadsEveryCombination) {
  struct Case {
    const char* text;
    Op a, b;
  };
  for (const Case& c : {Case{"NN", Op::N, Op::N}, Case{"NT", Op::N, Op::T}, Case{"TN", Op::T, Op::N},
                        Case{"TT", Op::T, Op::T}, Case{"nt", Op::N, Op::T}}) {
    // Start from the opposite of the expected ops, so each must be written.
    Op a = c.a == Op::N ? Op::T : Op::N, b = c.b == Op::N ? Op::T : Op::N;
    parse_trans(c.text, a, b);
    EXPECT_EQ(a, c.a) << c.text;
    EXPECT_EQ(b, c.b) << c.text;
  }
}

TEST(ParseTrans, NamesTheBadToken) {
  for (const char* bad : {"XY", "N", "NNN", "", "NX", "T "}) {
    Op a = Op::N, b = Op::N;
    EXPECT_TRUE(contains(usage_error_of([&] { parse_trans(bad, a, b); }), std::string("'") + bad + "'"));
  }
}

TEST(ParseByteSize, TakesBytesAndUnits) {
  const std::string flag = "--device-memory-limit";
  EXPECT_EQ(parse_byte_size(flag, "4096"), 4096u);
  EXPECT_EQ(parse_byte_size(flag, "1"), 1u);
  EXPECT_EQ(parse_byte_size(flag, "8G"), std::uint64_t{8} << 30);
  EXPECT_EQ(parse_byte_size(flag, "8g"), std::uint64_t{8} << 30);
  EXPECT_EQ(parse_byte_size(flag, "512M"), std::uint64_t{512} << 20);
  EXPECT_EQ(parse_byte_size(flag, "64k"), std::uint64_t{64} << 10);
  EXPECT_EQ(parse_byte_size(flag, "2T"), std::uint64_t{2} << 40);
  EXPECT_EQ(parse_byte_size(flag, "1.5GiB"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_byte_size(flag, "1.5Gi"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_byte_size(flag, "80GB"), 80'000'000'000u);
  EXPECT_EQ(parse_byte_size(flag, "100MB"), 100'000'000u);
  EXPECT_EQ(parse_byte_size(flag, "300B"), 300u);
  EXPECT_EQ(parse_byte_size(flag, "0.5K"), 512u);
}

TEST(ParseByteSize, NamesTheFlagAndTheForms) {
  const std::string flag = "--device-memory-limit";
  for (const char* bad : {"", "G", ".", "8Q", "-1", "+8G", "1e9", " 8G", "8 G", "8G ", "1.2.3", "8GG", "8iB", "0",
                          "0.1", "99999999999T", "nan", "inf"}) {
    const std::string message = usage_error_of([&] { (void)parse_byte_size(flag, bad); });
    EXPECT_TRUE(contains(message, flag)) << bad;
    EXPECT_TRUE(contains(message, std::string("'") + bad + "'")) << message;
    EXPECT_TRUE(contains(message, "8G")) << message;  // the forms it takes
  }
}

}  // namespace
}  // namespace gemmlab::cli
