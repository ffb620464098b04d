#pragma once
// Internal to tools/draw: the pieces of DOT text both pictures share (quoting, the role colours
// and the legend, the title, the size bound, the graph header).
#include <string>

#include "krc/runtime/network.hpp"

namespace krc::draw_detail {

// A double-quoted DOT string: quotes and backslashes escaped, lines joined by \n.
std::string quoted(const std::string& s);
// Text inside an HTML-like label.
std::string html(const std::string& s);
// The fill colour of a role's family (the legend's rows).
const char* colour_of(const Role& role);
// The legend node: the role families the network uses, with the read colours (with_ports) and
// which layers hold each cascade level.
std::string legend_node(const Network& net, bool with_ports);
// "NAME (STRATEGY): L layers, H heads, d_model D, max_len T"
std::string title_of(const Network& net);
// LimitError past kMaxDrawnBoxes heads and MLP blocks.
void check_size(const Network& net);
extern const char* const kGraphHeader;

}  // namespace krc::draw_detail
