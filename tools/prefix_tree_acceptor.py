#!/usr/bin/env python3
"""A random prefix-tree acceptor, as FlexFringe and Stamina start their state merging from.

Random words over a few letters are inserted into a tree until it has the asked number of
states; the end of each word is accepting or rejecting at random (a positive or negative
trace). Every other transition is missing: the tree is a partial DFA, which krc completes
with a rejecting sink (``krc compile --complete``). Written as krc's native JSON (``null``
for a missing transition), the states named by their prefixes' numbers in the order made;
or, with ``--flexfringe``, as FlexFringe's JSON output writes a model (nodes and edges, the
root's source -1, no acceptance: krc reads it as a semiautomaton).

    python3 tools/prefix_tree_acceptor.py --states 10000 --letters 3 --seed 1 -o pta.json
    python3 tools/prefix_tree_acceptor.py --states 10000 --letters 10 --shortest 3 \
        --longest 30 -o pta10.json   # issue 31's case: words of 3-30 letters over 10
"""
import argparse
import json
import random
import sys


def prefix_tree(states: int, letters: int, longest: int, rng: random.Random,
                shortest: int = 1) -> dict:
    alphabet = [chr(ord("a") + i) for i in range(letters)]
    children = [dict()]  # children[q][letter] = the child's number
    accepting = set()
    while len(children) < states:
        q = 0
        for _ in range(rng.randint(shortest, longest)):
            a = rng.randrange(letters)
            if a not in children[q]:
                if len(children) == states:
                    break
                children[q][a] = len(children)
                children.append(dict())
            q = children[q][a]
        if rng.random() < 0.5:
            accepting.add(q)
    return {
        "name": "prefix_tree_%d" % states,
        "states": [str(q) for q in range(len(children))],
        "alphabet": alphabet,
        "initial": 0,
        "accepting": sorted(accepting),
        "transitions": {alphabet[a]: [c.get(a) for c in children] for a in range(letters)},
    }


def flexfringe(tree: dict) -> dict:
    """The tree as FlexFringe's JSON output: "nodes" (the root's "source" is -1), "edges"."""
    nodes = [{"id": q, "source": -1 if q == 0 else 0} for q in range(len(tree["states"]))]
    edges = [{"source": str(q), "target": str(t), "name": a}
             for a, targets in tree["transitions"].items()
             for q, t in enumerate(targets) if t is not None]
    return {"alphabet": tree["alphabet"], "nodes": nodes, "edges": edges}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=10000, help="states of the tree (default 10000)")
    parser.add_argument("--letters", type=int, default=3, help="letters (default 3, at most 26)")
    parser.add_argument("--longest", type=int, default=40, help="the longest trace (default 40)")
    parser.add_argument("--shortest", type=int, default=1, help="the shortest trace (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flexfringe", action="store_true",
                        help="write FlexFringe's JSON output (nodes, edges) instead of krc's JSON")
    parser.add_argument("-o", "--output", help="the file to write (default: standard output)")
    args = parser.parse_args()
    if not 1 <= args.states <= 10_000_000 or not 1 <= args.letters <= 26 or \
            not 1 <= args.shortest <= args.longest:
        parser.error("--states 1..10,000,000, --letters 1..26 and 1 <= --shortest <= --longest")
    tree = prefix_tree(args.states, args.letters, args.longest, random.Random(args.seed),
                       args.shortest)
    text = json.dumps(flexfringe(tree) if args.flexfringe else tree)
    if args.output:
        with open(args.output, "x") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
