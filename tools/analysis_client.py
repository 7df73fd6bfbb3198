#!/usr/bin/env python3
"""Reference client of `martian-zero analysis`, the JSON analysis engine
(docs/protocol.md, "Analysis engine"). Standard library only.

As a library:

    from analysis_client import Engine
    with Engine(["--game", "martian-chess"]) as e:
        answer = e.ask({"id": "q", "maxVisits": 200})
        print(answer["bestMove"])

From the command line:

    tools/analysis_client.py query '{"id": "q", "maxVisits": 100}'   # one query, its answers
    tools/analysis_client.py check                                  # drives KataGo's flows, asserts

`check` starts `martian-zero analysis` (the binary named by --binary, else
$MARTIAN_ZERO_BIN, else `martian-zero` on the PATH) without a network and
runs every check of CHECKS, printing `ok <name>` for each; the first that
fails prints `FAIL <name>: <why>` and the exit status is 1.
"""

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time

# The engine's answers arrive within this many seconds, or the client gives up.
ANSWER_TIMEOUT = 120.0
# A terminate must be answered within this many seconds (measured here).
TERMINATE_LIMIT = 0.100


class Engine:
    """One `martian-zero analysis` process: queries written a line each,
    answers read on a thread of their own as they come."""

    def __init__(self, args, binary=None):
        binary = binary or os.environ.get("MARTIAN_ZERO_BIN", "martian-zero")
        self.proc = subprocess.Popen(
            [binary, "analysis", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.answers = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                answer = {"clientError": f"an answer that is not JSON: {line!r}"}
            self.answers.put((time.monotonic(), answer))
        self.answers.put((time.monotonic(), None))

    def send(self, query):
        """Writes one query or action; returns the time it was written."""
        self.proc.stdin.write(json.dumps(query) + "\n")
        self.proc.stdin.flush()
        return time.monotonic()

    def next(self, timeout=ANSWER_TIMEOUT):
        """The next answer and the time it was read; fails at the end of output."""
        at, answer = self.answers.get(timeout=timeout)
        if answer is None:
            raise AssertionError("the engine closed its output")
        return at, answer

    def read(self, timeout=ANSWER_TIMEOUT):
        """The next answer."""
        return self.next(timeout)[1]

    def final(self, query_id, turn=None):
        """The answers up to the final one (`isDuringSearch: false`) of the
        query `query_id` (of turn `turn` if given): (reports, final,
        others), `others` being the answers of other queries read meanwhile."""
        reports, others = [], []
        while True:
            a = self.read()
            mine = a.get("id") == query_id and (turn is None or a.get("turnNumber") == turn)
            if mine and a.get("isDuringSearch") is True:
                reports.append(a)
            elif mine and ("isDuringSearch" in a or "error" in a):
                return reports, a, others
            else:
                others.append(a)

    def ask(self, query):
        """Sends a query of one turn and returns its final answer (warnings skipped)."""
        self.send(query)
        return self.final(query["id"])[1]

    def close(self):
        """Closes the input; the engine answers what is left and exits. Returns the answers left."""
        self.proc.stdin.close()
        left = []
        while True:
            _, a = self.answers.get(timeout=ANSWER_TIMEOUT)
            if a is None:
                break
            left.append(a)
        self.proc.wait(timeout=ANSWER_TIMEOUT)
        return left

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def expect(cond, message):
    """Fails the check under way with `message` unless `cond`."""
    if not cond:
        raise AssertionError(message)


def is_final_search(a, visits=None):
    """Whether `a` is a final search answer (with `visits` visits if given)."""
    ok = a.get("isDuringSearch") is False and "rootInfo" in a and "error" not in a
    return ok and (visits is None or a["rootInfo"]["visits"] == visits)


# A search without end: it runs until terminated (the node cap is far).
ENDLESS = {"maxVisits": 4294967295}


def check_reports(binary):
    """reportDuringSearchEvery: at least two answers with isDuringSearch true,
    visits growing, then the final one with at least as many visits."""
    with Engine(["--game", "martian-chess", "--model", "none"], binary) as e:
        e.send({"id": "r", "maxVisits": 10**9, "movetime": 700, "reportDuringSearchEvery": 0.05})
        reports, final, others = e.final("r")
        expect(not others, f"only answers of r: {others}")
        expect(len(reports) >= 2, f"at least two reports, got {len(reports)}")
        visits = [a["rootInfo"]["visits"] for a in reports]
        expect(visits == sorted(visits) and visits[-1] > visits[0], f"visits grow over the reports: {visits}")
        expect(all(a["moveInfos"] and a["bestMove"] for a in reports), "the reports have the final answer's shape")
        expect(is_final_search(final) and final["rootInfo"]["visits"] >= visits[-1], f"the final answer: {final}")
        expect(e.close() == [], "nothing after the final answer")
    return f"{len(reports)} reports, visits {visits[0]} .. {visits[-1]}, final {final['rootInfo']['visits']}"


def check_terminate(binary):
    """terminate: a waiting query answers noResults, a running one its
    partial result; each within TERMINATE_LIMIT of the terminate being
    written (measured here), and before the terminate's own answer."""
    took = []
    with Engine(["--game", "martian-chess", "--model", "none", "--max-in-flight", "1"], binary) as e:
        e.send({"id": "run", **ENDLESS, "reportDuringSearchEvery": 0.02})
        e.send({"id": "wait", "maxVisits": 10})
        a = e.read()
        expect(a.get("id") == "run" and a.get("isDuringSearch") is True, f"a report of the running query: {a}")
        sent = e.send({"id": "t1", "action": "terminate", "terminateId": "wait"})
        while True:
            at, a = e.next()
            if a.get("id") == "wait":
                break
            expect(a.get("id") == "run" and a["isDuringSearch"], f"reports of run only: {a}")
        took.append(at - sent)
        expect(a == {"id": "wait", "turnNumber": 0, "isDuringSearch": False, "noResults": True}, f"noResults: {a}")
        expect(e.read() == {"id": "t1", "action": "terminate", "terminateId": "wait"}, "the terminate echoed")
        sent = e.send({"id": "t2", "action": "terminate", "terminateId": "run"})
        while True:
            at, a = e.next()
            if not a.get("isDuringSearch"):
                break
        took.append(at - sent)
        expect(a.get("id") == "run" and is_final_search(a), f"the running query's final answer: {a}")
        expect(a["rootInfo"]["visits"] > 0 and a["bestMove"], f"what its search found: {a}")
        expect(e.read().get("id") == "t2", "then the terminate's answer")
        expect(e.close() == [], "nothing left")
    ms = [round(t * 1000, 1) for t in took]
    expect(max(took) < TERMINATE_LIMIT, f"answered within {TERMINATE_LIMIT * 1000:.0f} ms: {ms} ms")
    return f"waiting {ms[0]} ms, running {ms[1]} ms"


def check_terminate_all(binary):
    """terminate_all: two running and one waiting query each get their final
    answer (noResults for the waiting one) before the action's answer."""
    with Engine(["--game", "martian-chess", "--model", "none", "--max-in-flight", "2"], binary) as e:
        for q in ["a", "b"]:
            e.send({"id": q, **ENDLESS, "reportDuringSearchEvery": 0.02})
        e.send({"id": "c", "maxVisits": 10})
        seen = set()
        while seen != {"a", "b"}:
            a = e.read()
            expect(a.get("isDuringSearch") is True, f"reports only: {a}")
            seen.add(a["id"])
        sent = e.send({"id": "all", "action": "terminate_all"})
        finals = {}
        while True:
            at, a = e.next()
            if a.get("action") == "terminate_all":
                break
            if not a.get("isDuringSearch"):
                finals[a["id"]] = a
        expect(sorted(finals) == ["a", "b", "c"], f"every query answered before the action: {sorted(finals)}")
        expect(finals["c"].get("noResults") is True, f"the waiting one: {finals['c']}")
        expect(is_final_search(finals["a"]) and is_final_search(finals["b"]), "the running ones' results")
        expect(e.close() == [], "nothing left")
    return f"answered in {round((at - sent) * 1000, 1)} ms"


def check_version(binary):
    """query_version: the line echoed with the version and the commit."""
    with Engine(["--game", "martian-chess", "--model", "none"], binary) as e:
        e.send({"id": 7, "action": "query_version", "extra": [1]})
        a = e.read()
        expect(a.get("id") == 7 and a.get("action") == "query_version" and a.get("extra") == [1], f"echo: {a}")
        expect(re.fullmatch(r"\d+\.\d+\.\d+", a.get("version", "")), f"a version: {a}")
        expect(re.fullmatch(r"[0-9a-f]{12}|unknown", a.get("git_hash", "")), f"a commit: {a}")
        e.close()
    return f"{a['version']} {a['git_hash']}"


def play_game(e, game, plies):
    """A game of `plies` plies, each move the engine's best at 4 visits."""
    moves = []
    for _ in range(plies):
        a = e.ask({"id": "p", "game": game, "moves": moves, "maxVisits": 4, "maxMoves": 1})
        expect(a.get("bestMove"), f"a move to play after {moves}: {a}")
        moves.append(a["bestMove"])
    return moves


def check_analyze_turns(binary):
    """analyzeTurns over a 20-ply Jetan game: 21 answers, each turn once,
    each the same search as the position alone."""
    with Engine(["--game", "jetan", "--model", "none"], binary) as e:
        moves = play_game(e, "jetan", 20)
        e.send({"id": "g", "moves": moves, "analyzeTurns": list(range(21)), "maxVisits": 12})
        answers = {}
        while len(answers) < 21:
            a = e.read()
            expect(a.get("id") == "g" and is_final_search(a, 12), f"a final answer of g: {a}")
            expect(a["turnNumber"] not in answers, f"turn {a['turnNumber']} answered twice")
            answers[a["turnNumber"]] = a
        expect(sorted(answers) == list(range(21)), f"turns 0..20: {sorted(answers)}")
        players = [answers[t]["rootInfo"]["currentPlayer"] for t in range(21)]
        expect(all(players[t] != players[t + 1] for t in range(20)), f"the side to move alternates: {players}")
        for t in [0, 9, 20]:
            alone = e.ask({"id": f"alone{t}", "moves": moves[:t], "maxVisits": 12})
            expect(alone["turnNumber"] == t, f"turn number {t}: {alone}")
            expect(alone["moveInfos"] == answers[t]["moveInfos"], f"turn {t}: the same search as alone")
        e.close()
    return "21 turns"


def check_unknown_field(binary):
    """An unknown field: a warning naming it, then the answer all the same."""
    with Engine(["--game", "martian-chess", "--model", "none"], binary) as e:
        e.send({"id": "u", "maxVisits": 9, "colour": "red"})
        w = e.read()
        expect(w == {"id": "u", "warning": "unknown field `colour`: ignored", "field": "colour"}, f"warning: {w}")
        a = e.read()
        expect(a.get("id") == "u" and is_final_search(a, 9), f"then the answer: {a}")
        e.close()
    return "warning, then 9 visits"


def check_both_games(binary):
    """One process analyses both games: each answer in its game's terms."""
    with Engine(["--game", "martian-chess", "--model", "none"], binary) as e:
        e.send({"id": "mc", "maxVisits": 8, "includePolicy": True})
        e.send({"id": "j", "game": "jetan", "maxVisits": 8, "includePolicy": True})
        e.send({"id": "mc2", "game": "martian-chess", "moves": ["d3d5"], "maxVisits": 8})
        e.send({"id": "j2", "game": "jetan", "moves": ["d3d5"], "maxVisits": 8})
        got = {}
        while len(got) < 4:
            a = e.read()
            got[a["id"]] = a
        for q in ["mc", "j", "mc2"]:
            expect(is_final_search(got[q], 8), f"{q}: {got[q]}")
        expect(got["mc"]["rootInfo"]["currentPlayer"] == "South", f"Martian Chess: South moves first: {got['mc']}")
        expect(got["mc2"]["rootInfo"]["currentPlayer"] == "North", f"then North: {got['mc2']}")
        expect(got["j"]["rootInfo"]["currentPlayer"] in ("Orange", "Black"), f"Jetan's sides: {got['j']}")
        mc_moves = {p["move"] for p in got["mc"]["policy"]}
        j_moves = {p["move"] for p in got["j"]["policy"]}
        expect(len(j_moves) > len(mc_moves) and not mc_moves & j_moves, "each game's own legal moves")
        expect(got["j2"].get("field") == "moves", f"d3d5 is not a Jetan move: {got['j2']}")
        e.close()
    return f"{len(mc_moves)} and {len(j_moves)} legal moves"


def check_priority(binary):
    """priority: with one search at a time, the waiting turns start highest
    priority first, then in the order read."""
    with Engine(["--game", "martian-chess", "--model", "none", "--max-in-flight", "1"], binary) as e:
        e.send({"id": "block", **ENDLESS, "reportDuringSearchEvery": 0.02})
        expect(e.read().get("id") == "block", "the first query runs")
        for q, p in [("low", -1), ("none", None), ("high", 5), ("high2", 5.0)]:
            e.send({"id": q, "maxVisits": 4, **({} if p is None else {"priority": p})})
        e.send({"id": "stop", "action": "terminate", "terminateId": "block"})
        order = [a["id"] for a in e.close() if not a.get("isDuringSearch") and "action" not in a]
        expect(order == ["block", "high", "high2", "none", "low"], f"highest priority first: {order}")
    return " > ".join(order[1:])


def check_pv_visits(binary):
    """includePVVisits: per move, the visits of each position of its line."""
    with Engine(["--game", "martian-chess", "--model", "none"], binary) as e:
        a = e.ask({"id": "pv", "maxVisits": 300, "includePVVisits": True, "maxMoves": 3})
        expect(is_final_search(a, 300), f"{a}")
        for m in a["moveInfos"]:
            pv, visits = m["pv"], m["pvVisits"]
            expect(len(visits) == len(pv), f"one count per move of the line: {m}")
            expect(visits[0] == m["visits"], f"the first is the move's visits: {m}")
            expect(all(x >= y >= 1 for x, y in zip(visits, visits[1:])), f"visits shrink along the line: {m}")
        b = e.ask({"id": "plain", "maxVisits": 10})
        expect(all("pvVisits" not in m for m in b["moveInfos"]), "no pvVisits unless asked")
        e.close()
    return f"{a['moveInfos'][0]['pvVisits']}"


def check_override_settings(binary):
    """overrideSettings: maxVisits and the exploration constant change the
    search; an unknown setting is a warning; a bad value an error naming it."""
    with Engine(["--game", "martian-chess", "--model", "none", "--visits", "50"], binary) as e:
        a = e.ask({"id": "o", "overrideSettings": {"maxVisits": 30}})
        expect(is_final_search(a, 30), f"maxVisits 30: {a}")
        a = e.ask({"id": "o2", "maxVisits": 20, "overrideSettings": {"maxVisits": 30}})
        expect(is_final_search(a, 20), f"the query's own maxVisits wins: {a}")
        wide = e.ask({"id": "w", "maxVisits": 200, "maxMoves": 0, "overrideSettings": {"cpuctExploration": 50}})
        narrow = e.ask({"id": "n", "maxVisits": 200, "maxMoves": 0, "overrideSettings": {"cpuctExploration": 0.05}})
        expect(len(wide["moveInfos"]) > len(narrow["moveInfos"]), "more exploration visits more moves")
        e.send({"id": "x", "maxVisits": 5, "overrideSettings": {"rootNoise": 1}})
        w = e.read()
        expect(w.get("id") == "x" and w.get("setting") == "rootNoise" and "warning" in w, f"a warning: {w}")
        expect(is_final_search(e.read(), 5), "then the answer")
        bad = e.ask({"id": "b", "overrideSettings": {"cpuctExploration": -1}})
        expect(bad.get("field") == "overrideSettings" and bad.get("setting") == "cpuctExploration", f"{bad}")
        e.close()
    return f"{len(wide['moveInfos'])} vs {len(narrow['moveInfos'])} moves visited"


def check_avoid_allow(binary):
    """avoidMoves and allowMoves: the root's moves are restricted."""
    with Engine(["--game", "martian-chess", "--model", "none"], binary) as e:
        full = e.ask({"id": "f", "maxVisits": 100, "maxMoves": 0})
        top = [m["move"] for m in full["moveInfos"][:2]]
        rule = {"player": "South", "moves": top, "untilDepth": 1}
        avoid = e.ask({"id": "a", "maxVisits": 100, "maxMoves": 0, "avoidMoves": [rule]})
        seen = {m["move"] for m in avoid["moveInfos"]}
        expect(is_final_search(avoid, 100) and not seen & set(top), f"{top} avoided: {sorted(seen)}")
        allow = e.ask({"id": "l", "maxVisits": 100, "maxMoves": 0, "allowMoves": [rule]})
        seen = {m["move"] for m in allow["moveInfos"]}
        expect(is_final_search(allow, 100) and seen == set(top), f"only {top}: {sorted(seen)}")
        other = e.ask({"id": "o", "maxVisits": 50, "maxMoves": 0, "avoidMoves": [dict(rule, player="North")]})
        expect(set(top) <= {m["move"] for m in other["moveInfos"]}, "a rule of the other side changes nothing here")
        bad = e.ask({"id": "b", "allowMoves": [dict(rule, moves=["a1a1"])]})
        expect(bad.get("field") == "allowMoves", f"no legal move left: {bad}")
        e.close()
    return f"avoided and allowed {top}"


CHECKS = [
    ("reports", check_reports),
    ("terminate", check_terminate),
    ("terminate_all", check_terminate_all),
    ("query_version", check_version),
    ("analyzeTurns", check_analyze_turns),
    ("unknown_field", check_unknown_field),
    ("both_games", check_both_games),
    ("priority", check_priority),
    ("includePVVisits", check_pv_visits),
    ("overrideSettings", check_override_settings),
    ("avoidMoves_allowMoves", check_avoid_allow),
]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", help="the martian-zero executable (default: $MARTIAN_ZERO_BIN, else martian-zero)")
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("query", help="send queries (JSON objects), print every answer")
    q.add_argument("queries", nargs="+")
    q.add_argument("--engine-args", default="", help="arguments of `analysis`, e.g. '--game jetan'")
    c = sub.add_parser("check", help="drive KataGo's flows against the engine and assert the answers")
    c.add_argument("names", nargs="*", help="only these checks")
    args = p.parse_args()
    if args.command == "query":
        with Engine(args.engine_args.split(), args.binary) as e:
            for text in args.queries:
                e.send(json.loads(text))
            for a in e.close():
                print(json.dumps(a))
        return 0
    for name, check in CHECKS:
        if args.names and name not in args.names:
            continue
        try:
            print(f"ok {name}: {check(args.binary)}", flush=True)
        except Exception as err:  # every failure of a check is reported as one
            print(f"FAIL {name}: {type(err).__name__}: {err}", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
