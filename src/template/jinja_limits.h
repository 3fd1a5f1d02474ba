// The interpreter's error type and the limits that keep a hostile template or hostile
// messages from crashing or hanging the process: every limit, when exceeded, is a
// TemplateError like any other bad template.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace nanoserve::templates::jinja {

struct TemplateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A render error whose message is final, so the renderer adds no location to it: it has
// one already, or it is the template's own raise_exception message.
struct RenderError : TemplateError {
  using TemplateError::TemplateError;
};

// One string value, and the whole rendered output.
inline constexpr size_t kMaxStringBytes = size_t{64} << 20;
// Items of one list or dict (a list of a 64 MiB string's characters must not take gigabytes).
inline constexpr size_t kMaxContainerItems = size_t{1} << 20;
// Lists and dicts inside each other (input JSON included): printing and destroying recurse.
inline constexpr int kMaxValueNesting = 256;
// Expressions and blocks inside each other in the template source: parsing and evaluating recurse.
inline constexpr int kMaxSyntaxNesting = 96;
// Evaluated expressions and loop iterations per render: stops endless nested loops.
inline constexpr uint64_t kMaxRenderSteps = 10'000'000;
// Macros calling macros (or themselves): each call is a C++ frame or two deeper.
inline constexpr int kMaxMacroDepth = 64;
// Bytes of all string values produced during one render (each copy costs its length):
// stops loops that keep copying a large string.
inline constexpr uint64_t kMaxRenderStringWork = uint64_t{1} << 30;

}  // namespace nanoserve::templates::jinja
