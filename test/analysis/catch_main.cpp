// Only built against Catch2 v2, which has no Catch2WithMain library.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
