// numoracle's GoogleTest integration (numoracle_gtest.h).
#include "numoracle_gtest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <gtest/gtest.h>

#include "eut.h"
#include "numoracle/bundle.h"
#include "numoracle/cand.h"

namespace nmo_gtest {

Engine CpuEngine(const std::string &candidate)
{
    return [candidate](nmo_tensor *out, const nmo_case *c, nmo_err *err) -> nmo_status {
        const nmo_cand *cd = nmo_cand_find(c->op->name, candidate.empty() ? nullptr : candidate.c_str());
        if (!cd)
            return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "no CPU candidate '%s' for op %s",
                               candidate.empty() ? "(default)" : candidate.c_str(), c->op->name);
        for (int k = 0; k < c->n_out; k++) {
            out[k] = c->out[k];
            out[k].data = nullptr;
            out[k].own = 0;
            nmo_status s = nmo_tensor_alloc(&out[k], err);
            if (s != NMO_OK) return s;
        }
        nmo_cand_args a = {c->in, c->n_in, out, c->n_out, c->param, c->op->n_param, &c->plan};
        return cd->run(&a, err);
    };
}

Engine EngineUnderTest(const std::string &spec, int *rc)
{
    // the CLI's engine-under-test rules (apps/cli/eut.c): cpu[:NAME], hip[:NAME],
    // plugin:PATH[:NAME]; a plugin listed in NMO_EXPECT_PLUGINS must load
    std::shared_ptr<cli_eut> e(new cli_eut, [](cli_eut *p) {
        cli_engine_release(p);
        delete p;
    });
    *rc = cli_engine_spec(e.get(), spec.c_str(), nullptr, 0);
    if (*rc) return Engine();
    return [e](nmo_tensor *out, const nmo_case *c, nmo_err *err) -> nmo_status {
        char why[800] = "";
        int r = cli_engine_exec(out, e.get(), c, why, sizeof why, err);
        if (r > 0) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s", why);
        return r == 0 ? NMO_OK : NMO_ERR_GENERIC; // err holds the engine's message
    };
}

int ParseArgs(int *argc, char **argv, Options *o)
{
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        std::string a = argv[i];
        auto val = [&](const char *flag) -> const char * {
            size_t l = std::strlen(flag);
            if (a.compare(0, l, flag) == 0 && a.size() > l && a[l] == '=') return argv[i] + l + 1;
            if (a == flag && i + 1 < *argc) return argv[++i];
            return nullptr;
        };
        const char *v;
        if ((v = val("--golden-data-dir")) || (v = val("--gd"))) o->root = v;
        else if ((v = val("--tier"))) o->tier = v;
        else if ((v = val("--engine"))) {
            int rc = 0;
            o->engine = EngineUnderTest(v, &rc);
            if (rc) return -1; // printed by cli_engine_spec
            o->engine_name = v;
        } else if ((v = val("--inconclusive"))) {
            if (std::strcmp(v, "fail") != 0 && std::strcmp(v, "skip") != 0) {
                std::fprintf(stderr, "numoracle_gtest: bad --inconclusive '%s': expected fail or skip\n", v);
                return -1;
            }
            o->inconclusive_skips = std::strcmp(v, "skip") == 0;
        } else argv[w++] = argv[i];
    }
    *argc = w;
    argv[w] = nullptr;
    if (nmo_tier_parse(o->tier.c_str()) < 0) {
        std::fprintf(stderr, "numoracle_gtest: bad --tier '%s': expected quick, standard, comprehensive or full\n",
                     o->tier.c_str());
        return -1;
    }
    return 0;
}

namespace {

struct Disc {
    nmo_disc d;
    ~Disc() { nmo_disc_free(&d); }
};

class BundleCase : public ::testing::Test {
  public:
    BundleCase(std::shared_ptr<Disc> d, int i, Engine e, bool inc_skips)
        : d_(std::move(d)), i_(i), e_(std::move(e)), inc_skips_(inc_skips)
    {
    }

    void TestBody() override
    {
        nmo_bundle b;
        std::memset(&b, 0, sizeof b);
        nmo_err err = {};
        nmo_status st = nmo_disc_load(&b, &d_->d, i_, 0, &err);
        if (st == NMO_ERR_UNKNOWN_OP) GTEST_SKIP() << err.msg;
        ASSERT_EQ(st, NMO_OK) << err.msg;
        nmo_tensor out[NMO_MAX_TENSORS];
        std::memset(out, 0, sizeof out);
        nmo_report rep;
        std::memset(&rep, 0, sizeof rep);
        std::string skip;
        run(&b, out, &rep, &skip);
        nmo_report_free(&rep);
        for (int k = 0; k < NMO_MAX_TENSORS; k++) nmo_tensor_free(&out[k]);
        nmo_bundle_free(&b);
        if (!skip.empty()) GTEST_SKIP() << skip;
    }

  private:
    // Run and judge; ASSERTs return from here so the caller frees what was allocated.
    void run(nmo_bundle *b, nmo_tensor *out, nmo_report *rep, std::string *skip)
    {
        nmo_err err = {};
        if (!b->have_golden) nmo_bundle_generate_inputs(b); // graph-only: inputs from the seed
        nmo_status es = e_(out, &b->c, &err);
        if (es == NMO_ERR_UNSUPPORTED) {
            *skip = err.msg;
            return;
        }
        ASSERT_EQ(es, NMO_OK) << "engine: " << err.msg;
        nmo_status js;
        if (b->have_golden && b->have_bounds) {
            js = nmo_bundle_judge(rep, b, out, 0, &err);
        } else {
            nmo_check_opts co = {};
            js = nmo_check(rep, &b->c, out, &co, &err);
        }
        ASSERT_EQ(js, NMO_OK) << err.msg;
        const nmo_elem_info &w = rep->worst;
        EXPECT_EQ(rep->n_fail, 0) << rep->n_fail << " of " << rep->n
                                  << " elements outside the certified reachable set; worst: output " << w.k
                                  << " index " << w.index << " value " << w.cand << " R = [" << w.rlo << ", "
                                  << w.rhi << "]";
        if (rep->n_inconc && rep->n_fail == 0 && inc_skips_) {
            *skip = "INCONCLUSIVE: " + std::to_string(rep->n_inconc) + " of " + std::to_string(rep->n) +
                    " elements (not a pass; --inconclusive skip)";
            return;
        }
        EXPECT_EQ(rep->n_inconc, 0) << rep->n_inconc << " of " << rep->n
                                    << " elements INCONCLUSIVE (never counted as a pass)";
    }

    std::shared_ptr<Disc> d_;
    int i_;
    Engine e_;
    bool inc_skips_;
};

void diag(void *, nmo_diag_level l, const char *msg)
{
    std::fprintf(stderr, "numoracle_gtest: %s: %s\n", l == NMO_DIAG_ERROR ? "error" : "warning", msg);
}

} // namespace

int RegisterBundleTests(const Options &o)
{
    std::string root = o.root;
    const char *env = std::getenv("HIPDNN_TEST_GOLDEN_DATA_DIR");
    if (root.empty() && env && *env) root = env;
    env = std::getenv("NUMORACLE_GOLDEN_DATA_DIR");
    if (root.empty() && env && *env) root = env;
    if (root.empty()) root = "bundles";
    auto d = std::make_shared<Disc>();
    nmo_err err = {};
    if (nmo_discover(&d->d, root.c_str(), nmo_tier_parse(o.tier.c_str()), 0, diag, nullptr, &err) != NMO_OK) {
        std::fprintf(stderr, "numoracle_gtest: %s\n", err.msg);
        return -1;
    }
    for (int i = 0; i < d->d.n; i++) {
        std::string name = d->d.cases[i].name;
        size_t dot = name.rfind('.');
        std::string suite = dot == std::string::npos ? name : name.substr(0, dot);
        std::string test = dot == std::string::npos ? "case" : name.substr(dot + 1);
        Engine e = o.engine;
        bool inc = o.inconclusive_skips;
        ::testing::RegisterTest(suite.c_str(), test.c_str(), nullptr, d->d.cases[i].src, __FILE__, __LINE__,
                                [d, i, e, inc]() -> ::testing::Test * { return new BundleCase(d, i, e, inc); });
    }
    return d->d.n;
}

} // namespace nmo_gtest
