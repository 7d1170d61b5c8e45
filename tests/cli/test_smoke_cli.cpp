#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

TEST(Cli, ListExitsZero) {
  EXPECT_EQ(std::system((std::string(GEMMLAB_EXE) + " list > /dev/null").c_str()), 0);
}
