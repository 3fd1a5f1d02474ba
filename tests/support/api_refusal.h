// For the tests of request parsers: the `param` of the 400 a body is refused with, or
// "(accepted)".
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "server/api_error.h"

namespace nanoserve::test {

template <typename Parse, typename Body>
std::string refused_param(Parse parse, const Body& body) {
  try {
    parse(body);
  } catch (const server::ApiError& e) {
    EXPECT_EQ(e.status, 400) << e.what();
    return e.param;
  }
  return "(accepted)";
}

}  // namespace nanoserve::test
