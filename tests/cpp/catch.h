// Includes Catch2 whichever major version is installed (v3 on the GPU
// machines, v2 from Debian 12 here).
#pragma once
#ifdef EMBER_CATCH2_V3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
