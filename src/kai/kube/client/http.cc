#include "kai/kube/client/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <vector>

#include "kai/kube/tls/fips.h"

namespace kai::k8s {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse* response;
  HttpLimits limits;
  const LineSink* sink = nullptr;
  const std::atomic<bool>* stop = nullptr;
  CURL* handle = nullptr;
  std::string partial;  // a streamed line not yet complete
  bool sink_stopped = false;
  std::string over_limit;  // why the transfer was cut short, when a limit stopped it
};

size_t OverLimit(Transfer* t, const char* what, size_t limit) {
  t->over_limit = std::string(what) + " is larger than the limit of " + std::to_string(limit) +
                  " bytes; the transfer was stopped";
  return 0;  // aborts the transfer
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.remove_suffix(1);
    t->response->headers[name] = std::string(value);
  }
  return size * n;
}

bool StreamingOk(Transfer* t) {
  long code = 0;
  curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &code);
  return code >= 200 && code < 300;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (!t->sink || !StreamingOk(t)) {
    if (t->response->body.size() + len > t->limits.max_answer_bytes) {
      return OverLimit(t, "the answer", t->limits.max_answer_bytes);
    }
    t->response->body.append(data, len);
    return len;
  }
  t->partial.append(data, len);
  size_t start = 0;
  for (size_t nl; (nl = t->partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(t->partial.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!(*t->sink)(line)) {
      t->sink_stopped = true;
      return 0;  // aborts the transfer
    }
  }
  t->partial.erase(0, start);
  if (t->partial.size() > t->limits.max_line_bytes) {
    return OverLimit(t, "a line of the stream", t->limits.max_line_bytes);
  }
  return len;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->stop && t->stop->load() ? 1 : 0;
}

curl_slist* Headers(const TokenSource& tokens, const HttpRequest& r) {
  curl_slist* h = nullptr;
  h = curl_slist_append(h, "Accept: application/json");
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    h = curl_slist_append(h, ("Content-Type: " + r.content_type).c_str());
  }
  if (const std::string token = tokens.Token(); !token.empty()) {
    h = curl_slist_append(h, ("Authorization: Bearer " + token).c_str());
  }
  h = curl_slist_append(h, "User-Agent: kai/0.1");
  return h;
}

void SetBlob(CURL* h, CURLoption opt, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(h, opt, &blob);
}

// CURLOPT_SSL_CTX_FUNCTION in FIPS mode: each connection's TLS context restricted as the
// servers' are (kai/kube/tls/fips.h).
CURLcode RestrictToFips(CURL*, void* ssl_ctx, void*) {
  return tls::RestrictToFips(static_cast<SSL_CTX*>(ssl_ctx)).ok() ? CURLE_OK : CURLE_SSL_CIPHER;
}

void SetTls(CURL* h, const ClusterConfig& c) {
  if (tls::FipsModeEnabled()) {
    curl_easy_setopt(h, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, &RestrictToFips);
  }
  if (c.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!c.ca_pem.empty()) {
    SetBlob(h, CURLOPT_CAINFO_BLOB, c.ca_pem);
  } else if (!c.ca_file.empty()) {
    curl_easy_setopt(h, CURLOPT_CAINFO, c.ca_file.c_str());
  }
  if (!c.client_cert_pem.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    SetBlob(h, CURLOPT_SSLCERT_BLOB, c.client_cert_pem);
  } else if (!c.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, c.client_cert_file.c_str());
  }
  if (!c.client_key_pem.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    SetBlob(h, CURLOPT_SSLKEY_BLOB, c.client_key_pem);
  } else if (!c.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, c.client_key_file.c_str());
  }
}

}  // namespace

// Idle easy handles keep their connections alive between requests; one per concurrent caller.
struct CurlHandlePool {
  std::mutex mu;
  std::vector<CURL*> idle;
  CURL* Take() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        curl_easy_reset(h);  // keeps the live connection
        return h;
      }
    }
    return curl_easy_init();
  }
  void Give(CURL* h) {
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(h);
  }
  ~CurlHandlePool() {
    for (CURL* h : idle) curl_easy_cleanup(h);
  }
};

HttpClient::HttpClient(ClusterConfig config, HttpLimits limits)
    : config_(std::move(config)),
      limits_(limits),
      tokens_(std::make_unique<TokenSource>(config_)),
      pool_(std::make_unique<CurlHandlePool>()) {
  GlobalInit();
}

HttpClient::~HttpClient() = default;

namespace {

// A transfer that notices `stop` within 50 ms: libcurl's progress callback runs only about once
// a second on an idle stream, so a watch would delay shutdown by up to a second.
CURLcode PerformStoppable(CURL* h, const std::atomic<bool>& stop) {
  CURLM* m = curl_multi_init();
  if (!m) return curl_easy_perform(h);
  curl_multi_add_handle(m, h);
  CURLcode rc = CURLE_OK;
  int running = 1;
  while (running) {
    if (curl_multi_perform(m, &running) != CURLM_OK) {
      rc = CURLE_RECV_ERROR;
      break;
    }
    if (stop.load()) {
      rc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    if (running) curl_multi_poll(m, nullptr, 0, 50, nullptr);
  }
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(m, &left)) {
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) rc = msg->data.result;
  }
  curl_multi_remove_handle(m, h);
  curl_multi_cleanup(m);
  return rc;
}

// Runs one request on one of the client's pooled handles.
HttpResponse Perform(const ClusterConfig& c, CurlHandlePool& pool, const TokenSource& tokens,
                     const HttpRequest& r, Transfer& t, std::chrono::milliseconds idle_timeout) {
  CURL* h = pool.Take();
  HttpResponse& resp = *t.response;
  if (!h) {
    resp.transport_error = "cannot create a libcurl handle";
    return resp;
  }
  t.handle = h;
  const std::string url = c.server + r.path;
  curl_slist* headers = Headers(tokens, r);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min<int64_t>(r.timeout.count(), 10000)));
  if (r.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  }
  SetTls(h, c);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  if (t.stop) {
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  }
  if (idle_timeout.count() > 0) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                     std::max<long>(1, static_cast<long>(idle_timeout.count() / 1000)));
  }
  // A peer that vanished without closing (a node lost, a dropped NAT entry) is found by TCP
  // keep-alive within about a minute, also on a watch that is quiet for minutes.
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
  const CURLcode rc = t.stop ? PerformStoppable(h, *t.stop) : curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  if (!t.over_limit.empty()) {
    resp.transport_error = t.over_limit;
  } else if (rc != CURLE_OK && !t.sink_stopped && !(t.stop && t.stop->load())) {
    resp.transport_error = curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  if (rc == CURLE_OK || t.sink_stopped) {
    pool.Give(h);
  } else {
    curl_easy_cleanup(h);  // a broken connection is not reused
  }
  return resp;
}

}  // namespace

HttpResponse HttpClient::Do(const HttpRequest& request) const {
  HttpResponse resp;
  Transfer t{&resp, limits_};
  return Perform(config_, *pool_, *tokens_, request, t, std::chrono::milliseconds(0));
}

HttpResponse HttpClient::Stream(const HttpRequest& request, const LineSink& sink,
                                const std::atomic<bool>& stop,
                                std::chrono::milliseconds idle_timeout) const {
  HttpResponse resp;
  Transfer t{&resp, limits_, &sink, &stop};
  return Perform(config_, *pool_, *tokens_, request, t, idle_timeout);
}

}  // namespace kai::k8s
