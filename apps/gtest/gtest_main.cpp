// numoracle_gtest: every bundle case of a tier cascade as a GoogleTest, judged by the
// certified reachable sets (RFC 0011 names; --gtest_filter selects them).
//   numoracle_gtest [--golden-data-dir DIR] [--tier TIER] [--engine cpu[:NAME] | hip[:NAME] | plugin:PATH[:NAME]]
//                   [--inconclusive fail|skip] [gtest flags]
#include <gtest/gtest.h>

#include "numoracle_gtest.h"

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    nmo_gtest::Options o;
    if (nmo_gtest::ParseArgs(&argc, argv, &o) < 0) return 2;
    if (nmo_gtest::RegisterBundleTests(o) < 0) return 2;
    return RUN_ALL_TESTS();
}
