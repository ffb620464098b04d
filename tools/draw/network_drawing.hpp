#pragma once
// Pictures of a compiled network (and of a holonomy decomposition's levels), for both doors (`krc
// draw` and krc.Network.draw), drawn with Graphviz: the graph is written here as DOT text and laid
// out and rendered by the Graphviz C library (libgvc), so both doors give the same bytes.
//
// The network picture: layers left to right, one box per attention head (`a{L}.h{H}`, the
// circuit file's names) and MLP block (`m{L}`), filled by the colour of its typed role's family
// and labelled with its role (level, component, counter, step: where it sits in the cascade);
// the residual stream between sublayers as a column of lanes, one per named residual subspace,
// so each head's reads (q, k, v told apart by colour) and writes run from and into lanes. The
// reads and writes are the circuit file's (circuit.hpp), so the picture and the file agree.
//
// The attention picture: for one word, every head's attention pattern (query position down,
// key position across, darker = more weight), computed by a dense float64 pass of the network
// with the attention it was compiled for, each grid titled by its head's name and role; every
// cell carries its weight as a tooltip ("a0.h1 q=2 k=1 w=0.5").
#include <Eigen/Dense>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "krc/automata/automaton.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

enum class DrawFormat { Dot, Svg, Png };
// From the output path's extension (.dot, .gv, .svg, .png); InputError naming the path
// otherwise.
DrawFormat draw_format_from_path(const std::string& path);
const char* to_string(DrawFormat format);

// Bounds: a larger network or word is refused (LimitError) before any layout.
inline constexpr int kMaxDrawnBoxes = 2000;               // heads and MLP blocks
inline constexpr int kMaxDrawnLanes = 400;                // residual subspaces
inline constexpr int kMaxAttentionLetters = 48;           // letters of the attention word
inline constexpr long long kMaxAttentionCells = 400'000;  // heads x positions^2

// The network picture as DOT text.
std::string network_dot(const Network& network);

// Every head's attention pattern on `word`, [word.size() + 1]^2 per head (row: query position,
// column: key position; row 0 is <bos>), heads in layer then head order; `states` receives the
// pass's argmax state after every prefix. Dense float64, the network's own attention kind.
std::vector<Eigen::MatrixXd> attention_patterns(const Network& network,
                                                const std::vector<LetterId>& word,
                                                std::vector<StateId>* states = nullptr);

// The attention picture as DOT text.
std::string attention_dot(const Network& network, const std::vector<LetterId>& word);

// Lays out `dot` with Graphviz's dot and renders it (Dot: the text itself, unchanged).
// LimitError when Graphviz refuses it.
std::string render_dot(const std::string& dot, DrawFormat format);

// What both doors write (`krc draw`, krc.Network.draw), so that they give the same bytes: the
// attention picture on `word` when there is one (checked against max_len), else the network
// picture, rendered as `format`. `word_option` names the word in messages ("--word", "word").
std::string draw_picture(const Network& network, const std::vector<LetterId>* word,
                         DrawFormat format, const std::string& word_option);

// The levels picture of a holonomy decomposition (`krc decompose --draw`,
// krc.Decomposition.draw), from its JSON summary (holonomy_report.hpp, decomposition_to_json):
// level 1 on top, each level a frame titled "level L: N states", holding one box per component
// titled as `krc decompose` prints it ((tiles,group), or the tile count for a trivial group),
// with its subduction class, representative and group; an arrow from each level to the next
// (a level's action reads the levels above). LimitError past kMaxDrawnBoxes components;
// std::invalid_argument for JSON that is no summary.
std::string decomposition_levels_dot(const nlohmann::json& summary);
// That picture rendered as `format`: what both doors write.
std::string draw_decomposition(const nlohmann::json& summary, DrawFormat format);

}  // namespace krc
