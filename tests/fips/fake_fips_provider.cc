// A stand-in for OpenSSL's FIPS provider, for tests only: a provider module that loads as
// "fips" and serves OpenSSL's default provider's algorithms with the property fips=yes. It is not
// FIPS-validated and checks nothing; it lets the tests run kai's FIPS mode where no real FIPS
// provider is installed (Debian, Ubuntu), proving the wiring: the provider loaded by name from
// $OPENSSL_MODULES, fips=yes as the default query, the TLS settings kai restricts to.
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/provider.h>

#include <string>
#include <vector>

namespace {

OSSL_PROVIDER* g_default = nullptr;
std::vector<std::vector<OSSL_ALGORITHM>> g_tables;
std::vector<std::string>* g_properties = nullptr;

// "provider=default,input=der" -> "provider=fips,input=der,fips=yes".
std::string AsFips(const char* definition) {
  std::string out = "provider=fips";
  std::string item;
  const std::string text = definition != nullptr ? definition : "";
  for (size_t start = 0; start <= text.size();) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    item = text.substr(start, comma - start);
    if (!item.empty() && item.rfind("provider=", 0) != 0 && item.rfind("fips=", 0) != 0) {
      out += "," + item;
    }
    start = comma + 1;
  }
  return out + ",fips=yes";
}

void BuildTables() {
  g_tables.resize(OSSL_OP__HIGHEST + 1);
  g_properties = new std::vector<std::string>();
  std::vector<std::pair<int, size_t>> owners;
  for (int op = 1; op <= OSSL_OP__HIGHEST; ++op) {
    int no_cache = 0;
    const OSSL_ALGORITHM* from = OSSL_PROVIDER_query_operation(g_default, op, &no_cache);
    for (; from != nullptr && from->algorithm_names != nullptr; ++from) {
      g_tables[op].push_back(*from);
      g_properties->push_back(AsFips(from->property_definition));
      owners.emplace_back(op, g_tables[op].size() - 1);
    }
    if (!g_tables[op].empty()) g_tables[op].push_back({nullptr, nullptr, nullptr, nullptr});
  }
  for (size_t i = 0; i < owners.size(); ++i) {
    g_tables[owners[i].first][owners[i].second].property_definition = (*g_properties)[i].c_str();
  }
}

const OSSL_ALGORITHM* Query(void*, int op, int* no_cache) {
  *no_cache = 0;
  if (op < 0 || op > OSSL_OP__HIGHEST || g_tables[op].empty()) return nullptr;
  return g_tables[op].data();
}

int Capabilities(void*, const char* capability, OSSL_CALLBACK* cb, void* arg) {
  return OSSL_PROVIDER_get_capabilities(g_default, capability, cb, arg);
}

const OSSL_DISPATCH kDispatch[] = {
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, reinterpret_cast<void (*)()>(&Query)},
    {OSSL_FUNC_PROVIDER_GET_CAPABILITIES, reinterpret_cast<void (*)()>(&Capabilities)},
    {0, nullptr}};

}  // namespace

extern "C" __attribute__((visibility("default"))) int OSSL_provider_init(const OSSL_CORE_HANDLE*,
                                                                         const OSSL_DISPATCH*,
                                                                         const OSSL_DISPATCH** out,
                                                                         void** provctx) {
  if (g_default == nullptr) {
    OSSL_LIB_CTX* inner = OSSL_LIB_CTX_new();
    g_default = inner != nullptr ? OSSL_PROVIDER_load(inner, "default") : nullptr;
    if (g_default == nullptr) return 0;
    BuildTables();
  }
  *provctx = OSSL_PROVIDER_get0_provider_ctx(g_default);
  *out = kDispatch;
  return 1;
}
