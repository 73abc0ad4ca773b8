#!/usr/bin/env python3
"""Deterministic synthetic Obsidian vault generator for scale benchmarks (NOT an oracle for parsing).

Quire's port of ../shared/tools/gen_vault.py (the spec): the same output byte for byte, made fast
enough for 100k notes by accumulating each weight list once (`random.choices` with `weights`
re-accumulates the whole list on every call, which made links O(notes) each; passing the
accumulated `cum_weights` draws exactly the same values). Checked with `diff -r` at 10k notes.

Vocabulary is learnt from any folder of real markdown (e.g. shared/vaults/tasks-docs), so word
frequencies look natural-ish (Zipf). Link targets follow a power law (a few hub notes).

usage: python gen_vault.py OUT_DIR --notes 10000 --vocab-from DIR [--seed 42] [--daily 365] [--canvases 20]
Also writes OUT_DIR/../<name>.queries.txt: 200 one/two-word queries sampled from the vocabulary.
"""
import argparse
import datetime as dt
import json
import os
import random
import re
from itertools import accumulate
from collections import Counter

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--notes", type=int, default=10000)
ap.add_argument("--vocab-from", required=True)
ap.add_argument("--seed", type=int, default=42)
ap.add_argument("--daily", type=int, default=365)
ap.add_argument("--canvases", type=int, default=20)
ap.add_argument("--words", type=int, default=350, help="mean words per note body")
a = ap.parse_args()
R = random.Random(a.seed)

cnt = Counter()
for d, dirs, fs in os.walk(a.vocab_from):
    dirs.sort()
    for f in sorted(fs):
        if f.endswith(".md"):
            t = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
            t = re.sub(r"```.*?```", " ", t, flags=re.S)
            cnt.update(w.lower() for w in re.findall(r"[A-Za-z][a-z]{2,14}", t))
vocab = [w for w, _ in sorted(cnt.items(), key=lambda kv: (-kv[1], kv[0]))[:8000]]  # ties broken by word: same on every machine
weights = [1.0 / (i + 1) ** 1.05 for i in range(len(vocab))]
vocab_cum = list(accumulate(weights))
content_words = vocab[100:3000]

def words(n):
    return R.choices(vocab, cum_weights=vocab_cum, k=n)

folders = ["Projects", "Areas", "Resources", "Archive", "People", "Meetings", "Reading", "Ideas", "Clippings", "Work/Clients", "Work/Internal"]
titles, seen = [], set()
while len(titles) < a.notes:
    t = " ".join(R.sample(content_words, R.choice([1, 2, 2, 3]))).title()
    if t.lower() not in seen:
        seen.add(t.lower())
        titles.append(t)
paths = [f"{R.choice(folders)}/{t}.md" for t in titles]
link_w = [1.0 / (i + 1) ** 0.9 for i in range(len(titles))]  # hubs
link_cum = list(accumulate(link_w))
tags = ["#" + w for w in R.sample(content_words, 120)] + ["#project/active", "#project/done", "#area/health", "#type/meeting", "#status/draft"]
tag_w = [1.0 / (i + 1) for i in range(len(tags))]
tag_cum = list(accumulate(tag_w))
base = dt.date(2025, 1, 1)

def rand_date():
    return base + dt.timedelta(days=R.randint(0, 600))

def task_line():
    s = R.choices([" ", "x", "/", "-"], weights=[70, 22, 5, 3])[0]
    parts = [f"- [{s}] " + " ".join(words(R.randint(3, 10)))]
    if R.random() < 0.3:
        parts.append(R.choice(tags))
    if R.random() < 0.25:
        parts.append(R.choice(["⏫", "🔼", "🔽", "🔺", "⏬"]))
    if R.random() < 0.15:
        parts.append("🔁 " + R.choice(["every day", "every week", "every month on the 1st", "every 2 weeks when done", "every weekday"]))
    if R.random() < 0.2:
        parts.append(f"🛫 {rand_date()}")
    if R.random() < 0.25:
        parts.append(f"⏳ {rand_date()}")
    if R.random() < 0.5:
        parts.append(f"📅 {rand_date()}")
    if s == "x":
        parts.append(f"✅ {rand_date()}")
    if s == "-":
        parts.append(f"❌ {rand_date()}")
    return " ".join(parts)

def link():
    j = R.choices(range(len(titles)), cum_weights=link_cum)[0]
    t = titles[j]
    r = R.random()
    if r < 0.12:
        return f"[[{t}|{' '.join(words(2))}]]"
    if r < 0.18:
        return f"[[{t}#Notes]]"
    if r < 0.20:
        return f"[[{paths[j][:-3]}]]"  # path-qualified link
    if r < 0.22:
        return f"[[Missing {t}]]"  # unresolved
    return f"[[{t}]]"

def paragraph(n):
    out = []
    for w in words(n):
        out.append(w)
        r = R.random()
        if r < 0.02:
            out.append(link())
        elif r < 0.026:
            out.append(R.choices(tags, cum_weights=tag_cum)[0])
    s = " ".join(out)
    return s[0].upper() + s[1:] + "."

os.makedirs(a.out, exist_ok=True)
total = 0
for i, (t, p) in enumerate(zip(titles, paths)):
    full = os.path.join(a.out, p)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    L = []
    if R.random() < 0.7:
        L.append("---")
        L.append(f"created: {rand_date()}")
        if R.random() < 0.6:
            L.append("tags:")
            for tg in sorted(set(R.choices(tags, cum_weights=tag_cum, k=R.randint(1, 4)))):  # sorted: set order varies with PYTHONHASHSEED
                L.append(f"  - {tg[1:]}")
        if R.random() < 0.2:
            L.append(f"aliases: [{', '.join(' '.join(words(2)) for _ in range(R.randint(1, 2)))}]")
        if R.random() < 0.4:
            L.append(f"status: {R.choice(['draft', 'active', 'done', 'someday'])}")
        if R.random() < 0.2:
            L.append(f'related: "{link()}"')
        if R.random() < 0.1:
            L.append(f"rating: {R.randint(1, 5)}")
        L.append("---")
    L.append(f"# {t}")
    L.append("")
    n = max(20, int(R.gauss(a.words, a.words * 0.6)))
    written = 0
    sec = 0
    while written < n:
        if R.random() < 0.3:
            sec += 1
            L.append(f"## {'Notes' if sec == 1 else ' '.join(words(2)).title()}")
            L.append("")
        k = R.randint(20, 90)
        L.append(paragraph(k))
        written += k
        if R.random() < 0.05:
            L.append(f"![[{titles[R.randrange(len(titles))]}]]")
        if R.random() < 0.08:
            L.append(f"Block with id {' '.join(words(5))} ^b{i}x{sec}")
        L.append("")
        if R.random() < 0.25:
            for _ in range(R.randint(1, 5)):
                L.append(task_line())
            L.append("")
    body = "\n".join(L) + "\n"
    total += len(body.encode())
    open(full, "w", encoding="utf-8").write(body)

os.makedirs(os.path.join(a.out, "Daily"), exist_ok=True)
for d in range(a.daily):
    day = base + dt.timedelta(days=d)
    L = [f"# {day}", "", "## Log", paragraph(R.randint(20, 80)), "", "## Tasks"]
    L += [task_line() for _ in range(R.randint(0, 6))]
    open(os.path.join(a.out, "Daily", f"{day}.md"), "w", encoding="utf-8").write("\n".join(L) + "\n")

os.makedirs(os.path.join(a.out, "Canvases"), exist_ok=True)
for c in range(a.canvases):
    nodes, edges = [], []
    for k in range(R.randint(3, 12)):
        kind = R.choice(["text", "file", "link", "group"])
        n = {"id": f"n{c}_{k}", "type": kind, "x": R.randint(-800, 800), "y": R.randint(-800, 800), "width": 250, "height": 120}
        if kind == "text":
            n["text"] = paragraph(12)
        elif kind == "file":
            n["file"] = paths[R.randrange(len(paths))]
        elif kind == "link":
            n["url"] = "https://example.org/" + words(1)[0]
        else:
            n["label"] = " ".join(words(2))
        nodes.append(n)
    for k in range(len(nodes) - 1):
        edges.append({"id": f"e{c}_{k}", "fromNode": nodes[k]["id"], "fromSide": "right", "toNode": nodes[k + 1]["id"], "toSide": "left"})
    json.dump({"nodes": nodes, "edges": edges}, open(os.path.join(a.out, "Canvases", f"Board {c}.canvas"), "w"), indent=1)

qs = [" ".join(R.sample(content_words[:1500], R.choice([1, 1, 2]))) for _ in range(200)]
open(os.path.abspath(a.out.rstrip("/")) + ".queries.txt", "w").write("\n".join(qs) + "\n")
print(json.dumps({"notes": a.notes, "daily": a.daily, "canvases": a.canvases, "md_bytes_notes": total}))
