#include "kai/kube/io/usage_file.h"

#include <fstream>
#include <sstream>

namespace kai::usage {

Result<UsageStore> LoadUsageFile(const std::string& path) {
  std::ifstream in(path);
  // The words yaml-cpp's LoadFile used for a file it could not open.
  if (!in) return Error{path + ": bad file: " + path};
  std::stringstream text;
  text << in.rdbuf();
  return ParseUsage(text.str(), path);
}

}  // namespace kai::usage
