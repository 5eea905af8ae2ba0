// printable(): what a one-line message may quote of text from outside.
#include <gtest/gtest.h>

#include <string>

#include "base/printable.hpp"

using tiersim::printable;

TEST(Printable, KeepsTextAndValidUtf8) {
  EXPECT_EQ(printable("plain text, 1.5e3 / path:x"), "plain text, 1.5e3 / path:x");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
}

TEST(Printable, EscapesControlsDelAndStrayBytes) {
  EXPECT_EQ(printable(std::string("a\x07"
                                  "b\x1b[31m\x7f\n\t") +
                      '\0'),
            "a\\x07b\\x1B[31m\\x7F\\n\\t\\x00");
  EXPECT_EQ(printable("\xff\xfe"), "\\xFF\\xFE");
  EXPECT_EQ(printable("\xc3"), "\\xC3");                    // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(printable("\xc2\x85"), "\\xC2\\x85");           // C1 control (NEL)
}

TEST(Printable, CutsLongText) {
  EXPECT_EQ(printable(std::string(200, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(printable("abc", 3), "abc");
}
