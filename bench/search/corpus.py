"""A corpus of Korean board posts for the search bench: COPY-ready lines `title<TAB>body`.

    python3 bench/search/corpus.py N [SEED] > pool.tsv

Words come from bench/search/words.txt (the head, most frequent first) and a generated tail of rarer Hangul
words; each word's chance follows Zipf's law by rank (1/rank), as word counts of real text do, so a few words are in
most posts, a few dozen in about a tenth of them, and the tail's words in a handful per million. Korean words carry
particles (파전에, 막걸리랑) a third of the time, and compounds are formed (김치파전), as people write them.
Deterministic for a seed.
"""
import os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
N = int(sys.argv[1])
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261126)

head = [w.strip() for w in open(os.path.join(HERE, "words.txt"), encoding="utf-8") if w.strip() and not w.startswith("#")]
# The tail: 40,000 words of 2-3 syllables, made of the head's syllables and other common ones, none a head word.
common = "가나다라마바사아자차카타파하고노도로모보소오조초코토포호구누두루무부수우주추쿠투푸후기니디리미비시이지치키티피히" \
         "그느드르므브스으즈츠크트프흐개내대래매배새애재채캐태패해강남동정성상장방산선전연원인일한"
syllables = sorted(set(common) | {c for w in head for c in w if "\uac00" <= c <= "\ud7a3"})
tail, seen = [], set(head)
while len(tail) < 40000:
    w = "".join(rng.choice(syllables) for _ in range(rng.choice((2, 2, 3))))
    if w not in seen:
        seen.add(w)
        tail.append(w)
vocab = head + tail
weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
cum, total = [], 0.0
for w in weights:
    total += w
    cum.append(total)
particles = ["에", "이", "가", "을", "를", "은", "는", "랑", "이랑", "에서", "도", "만", "의", "로", "하고"]
emoji = ["☔", "🌧️", "☀️", "❄️", "🍜", "☕", "🎵", "😊", "👍"]


def word():
    w = rng.choices(vocab, cum_weights=cum)[0]
    if "\uac00" <= w[0] <= "\ud7a3":
        r = rng.random()
        if r < 0.33:
            w += rng.choice(particles)
        elif r < 0.38:
            w = rng.choices(vocab, cum_weights=cum)[0] + w
    return w


out = sys.stdout
for _ in range(N):
    title = " ".join(word() for _ in range(rng.randint(2, 6)))
    body = " ".join(word() for _ in range(rng.randint(8, 40)))
    if rng.random() < 0.1:
        body += " " + rng.choice(emoji)
    if rng.random() < 0.1:
        body += f" {rng.randint(1, 40)}도"
    out.write(f"{title}\t{body}\n")
