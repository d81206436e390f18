// The size parser every command shares: values worked out by hand.
#include "catch.h"

#include "base/size_parse.h"

using cumemtrace::parse_size;

TEST_CASE("sizes: bytes, IEC and SI units, decimals that make whole bytes") {
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size("123") == 123u);
  CHECK(parse_size("512MiB") == 536870912u);
  CHECK(parse_size("2GiB") == 2147483648u);
  CHECK(parse_size("1.5GB") == 1500000000u);
  CHECK(parse_size("0.5 GiB") == 536870912u);
  CHECK(parse_size("64 MiB") == 67108864u);
  CHECK(parse_size("1kB") == 1000u);
  CHECK(parse_size("1KiB") == 1024u);
  CHECK(parse_size("3TB") == 3000000000000u);
  CHECK(parse_size("16gib") == 17179869184u);
  CHECK(parse_size("7B") == 7u);
  CHECK(parse_size("18446744073709551615") == 18446744073709551615u);
}

TEST_CASE("sizes: what is not a size says why") {
  std::string why;
  CHECK_FALSE(parse_size("", &why));
  CHECK(why.find("is not a size") != std::string::npos);
  CHECK_FALSE(parse_size("1.3B", &why));
  CHECK(why.find("not a whole number of bytes") != std::string::npos);
  CHECK_FALSE(parse_size("5XB", &why));
  CHECK(why.find("unknown unit") != std::string::npos);
  CHECK_FALSE(parse_size("18446744073709551616", &why));
  CHECK(why.find("too large") != std::string::npos);
  CHECK_FALSE(parse_size("17179869184GiB", &why));
  CHECK(why.find("too large") != std::string::npos);
  CHECK_FALSE(parse_size("-1", &why));
}
