// numoracle's GoogleTest integration: discover a golden data tree (RFC 0011 folders and
// tiers) and register one GoogleTest per bundle case, under the RFC's test name
// ({Operation}_{layout}_{dtype}.{BundleDir}, {Operation}_{TopologyName}.{case_id},
// tier prefixes Standard/ ...), so --gtest_filter selects cases as RFC 0011 describes.
//
// Each test loads its bundle, runs the engine on the bundle's inputs (graph-only bundles:
// inputs from the bundle's seed), judges every output element against the certified
// reachable sets (stored bounds; recomputed when the bundle has none) and fails on any
// FAIL element. INCONCLUSIVE elements fail the test too (never counted as a pass); an
// operation or dtype the engine does not serve, or an operation numoracle does not
// model, is GTEST_SKIP with the reason.
//
//   int main(int argc, char **argv) {
//       ::testing::InitGoogleTest(&argc, argv);
//       nmo_gtest::Options o;                  // root, tier, engine
//       nmo_gtest::ParseArgs(&argc, argv, &o);  // --golden-data-dir, --tier, --engine
//       if (nmo_gtest::RegisterBundleTests(o) < 0) return 2;
//       return RUN_ALL_TESTS();
//   }
#ifndef NMO_GTEST_H
#define NMO_GTEST_H

#include <functional>
#include <string>

#include "numoracle/numoracle.h"

namespace nmo_gtest {

// The engine under test: fill out[k] (allocated like c->out[k]) from c's inputs.
// Return NMO_OK, NMO_ERR_UNSUPPORTED (the test is skipped, err says why) or an error.
using Engine = std::function<nmo_status(nmo_tensor *out, const nmo_case *c, nmo_err *err)>;

// A CPU candidate of the registry by name ("" = each operator's default correct one).
Engine CpuEngine(const std::string &candidate = "");

// The engine under test by the CLI's --engine syntax: cpu[:NAME], hip[:NAME] (a GPU
// build) or plugin:PATH[:NAME]; what the engine cannot serve (the capability query, a
// plugin that did not load) is a skip. *rc: 0, or 2 after printing the error.
Engine EngineUnderTest(const std::string &spec, int *rc);

struct Options {
    std::string root;          // golden data root; "" = HIPDNN_TEST_GOLDEN_DATA_DIR,
                               // NUMORACLE_GOLDEN_DATA_DIR, else "bundles"
    std::string tier = "quick"; // quick, standard, comprehensive, full (a cascade)
    std::string engine_name = "cpu";
    Engine engine = CpuEngine();
    // INCONCLUSIVE elements (no FAIL): a failure (default), or a skip saying so
    // (--inconclusive skip; never a pass either way)
    bool inconclusive_skips = false;
};

// Take --golden-data-dir DIR (or --gd), --tier T, --engine E (EngineUnderTest) and
// --inconclusive fail|skip out of argv.
// Returns 0, or -1 after printing the error.
int ParseArgs(int *argc, char **argv, Options *o);

// Register one test per discovered case; returns the number registered, -1 on a
// discovery error (printed).
int RegisterBundleTests(const Options &o);

} // namespace nmo_gtest

#endif
