// numoracle CLI: a TOML document as a cJSON tree, through toml++ (Debian's
// libtomlplusplus-dev), for RFC 0006's TOML engine configuration. Only this translation
// unit is C++; the configuration rules live once, in C, over the JSON tree (cmd_run.c).
// Tables become objects, arrays arrays, strings strings, integers and floats numbers
// (an integer beyond 2^53 is refused: a double cannot hold it), booleans booleans, dates
// and times their TOML text.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include <toml++/toml.h>

extern "C" {
#include <cjson/cJSON.h>
#include "toml_json.h"
}

namespace {

struct conv_error {
    std::string msg;
};

cJSON *to_json(const toml::node &n, const std::string &where);

cJSON *table_json(const toml::table &t, const std::string &where)
{
    cJSON *o = cJSON_CreateObject();
    for (auto &&[k, v] : t) {
        std::string key(k.str());
        cJSON *c;
        try {
            c = to_json(v, where.empty() ? key : where + "." + key);
        } catch (...) {
            cJSON_Delete(o);
            throw;
        }
        cJSON_AddItemToObject(o, key.c_str(), c);
    }
    return o;
}

cJSON *to_json(const toml::node &n, const std::string &where)
{
    if (auto t = n.as_table()) return table_json(*t, where);
    if (auto a = n.as_array()) {
        cJSON *arr = cJSON_CreateArray();
        size_t i = 0;
        for (auto &&e : *a) {
            cJSON *c;
            try {
                c = to_json(e, where + "[" + std::to_string(i++) + "]");
            } catch (...) {
                cJSON_Delete(arr);
                throw;
            }
            cJSON_AddItemToArray(arr, c);
        }
        return arr;
    }
    if (auto s = n.as_string()) return cJSON_CreateString(s->get().c_str());
    if (auto i = n.as_integer()) {
        int64_t v = i->get();
        if (v > (int64_t(1) << 53) || v < -(int64_t(1) << 53))
            throw conv_error{where + ": integer " + std::to_string(v) + " is beyond 2^53 (not exact as a JSON number)"};
        return cJSON_CreateNumber(double(v));
    }
    if (auto f = n.as_floating_point()) {
        double v = f->get();
        if (!std::isfinite(v)) throw conv_error{where + ": inf and nan are not configuration values"};
        return cJSON_CreateNumber(v);
    }
    if (auto b = n.as_boolean()) return cJSON_CreateBool(b->get());
    std::ostringstream os; // date, time, date-time: their TOML text
    if (auto d = n.as_date()) os << d->get();
    else if (auto tm = n.as_time()) os << tm->get();
    else if (auto dt = n.as_date_time()) os << dt->get();
    else throw conv_error{where + ": a value of an unknown TOML type"};
    return cJSON_CreateString(os.str().c_str());
}

} // namespace

extern "C" cJSON *cli_toml_parse(const char *text, const char *path, char *err, size_t errn)
{
    try {
        toml::table t = toml::parse(std::string_view(text), std::string_view(path));
        return table_json(t, "");
    } catch (const toml::parse_error &e) {
        const auto &b = e.source().begin;
        std::snprintf(err, errn, "%s: not valid TOML (line %u, column %u): %.*s", path, unsigned(b.line),
                      unsigned(b.column), int(e.description().size()), e.description().data());
    } catch (const conv_error &e) {
        std::snprintf(err, errn, "%s: %s", path, e.msg.c_str());
    } catch (const std::exception &e) {
        std::snprintf(err, errn, "%s: %s", path, e.what());
    }
    return nullptr;
}
