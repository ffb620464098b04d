#pragma once
// The one version of krc: the CMake project's (CMakeLists.txt), printed by `krc --version` and
// written into every weights file's `compiler` metadata.
namespace krc {

inline constexpr const char* kVersion = KRC_VERSION;

}  // namespace krc
