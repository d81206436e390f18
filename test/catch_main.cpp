// The one main() of every test executable (Catch2 v2 has no Catch2WithMain library).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
