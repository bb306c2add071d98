#pragma once
// Shared settings of the property tests. CTest runs every TEST in its own process and CI also runs
// them under AddressSanitizer (about 10x slower), so a sweep scales its world count down there.

#if defined(__SANITIZE_ADDRESS__)
#define KAI_PROPERTY_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KAI_PROPERTY_UNDER_ASAN 1
#endif
#endif

namespace kai::testing {

// The number of random worlds a sweep checks: `release` in a plain build, a tenth under ASan.
constexpr int SweepWorlds(int release) {
#ifdef KAI_PROPERTY_UNDER_ASAN
  return release / 10;
#else
  return release;
#endif
}

}  // namespace kai::testing
