#pragma once
// Large counts in messages and reports, with thousands separators ("1,048,576"). Every library
// above automata writes counts this way, so it lives at the bottom of the arrows.
#include <string>

namespace krc {

std::string with_thousands(long long n);

}  // namespace krc
