// Stream: the hand-off between an engine thread and the reader of one request.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/engine.h"

namespace nanoserve::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Event text(const std::string& piece, int32_t token) {
  Event e;
  e.text = piece;
  e.tokens = {token};
  return e;
}

TEST(Stream, EventsComeOutInTheOrderPushed) {
  Stream s;
  s.push(text("a", 1));
  s.push(text("b", 2));
  Event done;
  done.kind = Event::Kind::Done;
  done.finish = FinishReason::Length;
  s.push(done);
  auto e = s.next(0ms);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text, "a");
  EXPECT_EQ(e->tokens, std::vector<int32_t>{1});
  EXPECT_EQ(s.next(0ms)->text, "b");
  e = s.next(0ms);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Event::Kind::Done);
  EXPECT_EQ(e->finish, FinishReason::Length);
  EXPECT_FALSE(s.next(0ms));
}

TEST(Stream, NextWaitsTheTimeoutWhenNothingComes) {
  Stream s;
  const auto start = Clock::now();
  EXPECT_FALSE(s.next(50ms));
  EXPECT_GE(Clock::now() - start, 50ms);
}

// A reader blocked in next() wakes for an event pushed from another thread, long before its
// timeout (no polling interval to wait out).
TEST(Stream, BlockedReaderWakesOnPush) {
  Stream s;
  std::thread producer([&] {
    std::this_thread::sleep_for(20ms);
    s.push(text("hello", 7));
  });
  const auto start = Clock::now();
  const auto e = s.next(60s);
  const auto waited = Clock::now() - start;
  producer.join();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text, "hello");
  EXPECT_LT(waited, 30s);
}

TEST(Stream, ManyEventsFromAnotherThreadArriveIntact) {
  Stream s;
  constexpr int kEvents = 10000;
  std::thread producer([&] {
    for (int i = 0; i < kEvents; ++i) s.push(text(std::to_string(i), i));
  });
  for (int i = 0; i < kEvents; ++i) {
    const auto e = s.next(60s);
    ASSERT_TRUE(e);
    ASSERT_EQ(e->tokens, std::vector<int32_t>{i});
    ASSERT_EQ(e->text, std::to_string(i));
  }
  producer.join();
}

TEST(Stream, CancelIsSeenByTheEngineSide) {
  Stream s;
  EXPECT_FALSE(s.cancelled());
  std::thread reader([&] { s.cancel(); });
  reader.join();
  EXPECT_TRUE(s.cancelled());
  // The engine may still push its final event; a late reader can read it.
  Event done;
  done.kind = Event::Kind::Done;
  done.finish = FinishReason::Cancelled;
  s.push(done);
  EXPECT_EQ(s.next(0ms)->finish, FinishReason::Cancelled);
}

}  // namespace
}  // namespace nanoserve::engine
