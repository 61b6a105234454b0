#!/usr/bin/env bash
# Gathers more training speech from Debian packages (see SOURCES.md): spoken stamp descriptions
# (Tux Paint), IVR prompts (Asterisk, G.722), spoken words (KTuberling) and acted adventure-game
# dialogue (Flight of the Amazon Queen). Every utterance is converted to 16 kHz mono 16-bit WAV
# with ffmpeg (soxr), then consecutive utterances of one source / language / voice are joined
# with the concat demuxer into clips of about 20-40 s, with 0.2-0.9 s pauses between them
# (pseudo-random, seeded, so every run gives the same clips). Nothing here goes into the
# repository; labels are computed in train_spectral.py from the clean clips by the corpus's energy rule.
#   bash gather_speech.sh WORKDIR        (JOBS=N for N parallel conversions, default 2)
# Writes WORKDIR/debs2 (packages), WORKDIR/x2 (unpacked), WORKDIR/utt2 (per-utterance WAVs, clip
# lists) and WORKDIR/wav/speech_new (clips, durations.tsv, quality.tsv). Re-running skips what
# is already there.
set -euo pipefail
W=${1:?usage: gather_speech.sh WORKDIR}
W=$(cd "$W" 2>/dev/null && pwd || { mkdir -p "$W" && cd "$W" && pwd; })
JOBS=${JOBS:-2}
D=$W/debs2 X=$W/x2 U=$W/utt2 O=$W/wav/speech_new
mkdir -p "$D" "$X" "$U/lists" "$U/silence" "$O"

PKGS="tuxpaint-stamps-default
      asterisk-core-sounds-en-g722 asterisk-core-sounds-es-g722 asterisk-core-sounds-fr-g722
      asterisk-core-sounds-it-g722 asterisk-core-sounds-ru-g722
      ktuberling-data flight-of-the-amazon-queen"

# --- download and unpack -------------------------------------------------------------------
missing=""
for p in $PKGS; do ls "$D/${p}_"*.deb >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  (cd "$D" && apt-get download $missing) || { apt-get update && (cd "$D" && apt-get download $missing); }
fi
for d in "$D"/*.deb; do
  n=$(basename "$d" | cut -d_ -f1)
  [ -f "$X/.$n.unpacked" ] && continue
  rm -rf "${X:?}/$n"; mkdir -p "$X/$n"; dpkg-deb -x "$d" "$X/$n"; touch "$X/.$n.unpacked"
done
for d in "$D"/*.deb; do echo "$(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version)"; done > "$O/packages.txt"

# --- utterance lists: one line per utterance "GROUP<TAB>INPUT<TAB>OUTNAME<TAB>INPUTFORMAT" -----
# GROUP is source__language[_voice]; it names the clips. INPUTFORMAT is "-" (probe) or an
# ffmpeg demuxer name (g722: raw G.722, always 16 kHz, so no -ar on the input).
L=$U/lists/utterances.tsv
: > "$L.part"
san() { sed 's|[^A-Za-z0-9_-]|_|g'; }

# 1. Tux Paint stamps: only the spoken descriptions, NAME_desc.ogg (English) and
#    NAME_desc_LL.ogg (translations). The other .ogg files are the stamps' sound effects (animal
#    calls, instruments, vehicles) or single spoken numbers and letters, and are not used.
TP=$X/tuxpaint-stamps-default/usr/share/tuxpaint/stamps
find "$TP" -name "*_desc*.ogg" | LC_ALL=C sort | while read -r f; do
  b=$(basename "$f")
  lang=$(echo "$b" | sed -nE 's/.*_desc(_([a-z]{2,3}(_[A-Z]{2})?))?(\.ogg)+$/\2/p')
  echo "$b" | grep -qE '_desc(_[a-z]{2,3}(_[A-Z]{2})?)?(\.ogg)+$' || continue
  [ -n "$lang" ] || lang=en
  rel=${f#"$TP"/}; printf 'tuxpaint__%s\t%s\t%s\t-\n' "$lang" "$f" "tuxpaint/$lang/$(echo "${rel%%.ogg*}" | san)"
done >> "$L.part"

# 2. Asterisk core prompts, G.722 (16 kHz), one speaker per language. Left out: silence/,
#    beep, beeperr, ascending-/descending-2tone (tones) and tt-monkeys (animal noise).
for lang in en es fr it ru; do
  for vdir in "$X/asterisk-core-sounds-$lang-g722"/usr/share/asterisk/sounds/*/; do
    voice=$(basename "$vdir")                     # e.g. en_US_f_Allison, ru_RU_f_IvrvoiceRU
    v=$(echo "$voice" | cut -d_ -f4 | tr 'A-Z' 'a-z' | sed 's/ivrvoiceru/ivr/')
    find "$vdir" -name "*.g722" ! -path "*/silence/*" ! -name "beep.g722" ! -name "beeperr.g722" \
      ! -name "*-2tone.g722" ! -name "tt-monkeys.g722" | LC_ALL=C sort | while read -r f; do
      rel=${f#"$vdir"}; printf 'asterisk__%s_%s\t%s\t%s\tg722\n' "$lang" "$v" "$f" "asterisk/$lang/$(echo "${rel%.g722}" | san)"
    done
  done
done >> "$L.part"

# 3. KTuberling: every file in sounds/LANG/ is a spoken word (the name of a toy piece). The
#    sr@* folders are copies of sr and are skipped.
KT=$X/ktuberling-data/usr/share/ktuberling/sounds
for dir in "$KT"/*/; do
  lang=$(basename "$dir"); case $lang in *@*) continue;; esac
  find "$dir" -type f \( -name "*.ogg" -o -name "*.wav" -o -name "*.opus" \) | LC_ALL=C sort | while read -r f; do
    b=$(basename "$f"); printf 'ktuberling__%s\t%s\t%s\t-\n' "$lang" "$f" "ktuberling/$lang/$(echo "${b%.*}" | san)"
  done
done >> "$L.part"

# 4. Flight of the Amazon Queen (CD talkie, MP3-compressed by ScummVM's tools): queen.1c starts
#    with a table, "QTBL", 6-byte version, 2 bytes, 1 byte compression (1 = MP3), uint16 BE
#    entry count, then per entry 12-byte name, 1-byte bundle, uint32 BE offset, uint32 BE size.
#    Speech is the .SB entries (11 kHz mono MP3); entries named ...SSSS.SB are sound effects,
#    BLANK000/UNTITLE?/ROCKPAKS are not dialogue, all are left out. Every 3rd line (by name) is
#    used. Voice: "joe" for Joe King's lines (JOE*, or J as the 7th character), "cast" for the
#    rest (all other characters; cutaway lines C* may include Joe).
Q=$X/flight-of-the-amazon-queen/usr/share/scummvm/flight-of-the-amazon-queen/queen.1c
QS=$X/queen-sb
if [ -f "$Q" ]; then
  if [ ! -f "$QS/.done" ]; then
    mkdir -p "$QS"
    python3 - "$Q" "$QS" <<'EOF'
import re, struct, sys
src, out = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    h = f.read(15)
    assert h[:4] == b"QTBL" and h[12] == 1, "unexpected queen.1c (not the MP3 talkie)"
    n = struct.unpack(">H", h[13:15])[0]
    ents = []
    for _ in range(n):
        e = f.read(21)
        ents.append((e[:12].split(b"\0")[0].decode("ascii"),) + struct.unpack(">BII", e[12:]))
    speech = sorted(e for e in ents if e[0].endswith(".SB") and "SSSS" not in e[0]
                    and not re.match(r"(BLANK|UNTITLE|ROCKPAKS)", e[0]))
    for i, (name, _, off, size) in enumerate(speech):
        if i % 3: continue
        f.seek(off)
        with open(f"{out}/{name[:-3]}.mp3", "wb") as g: g.write(f.read(size))
EOF
    touch "$QS/.done"
  fi
  for f in $(ls "$QS"/*.mp3 | LC_ALL=C sort); do
    b=$(basename "$f" .mp3)
    case $b in JOE*|??????J*) v=joe;; *) v=cast;; esac
    printf 'queen__en_%s\t%s\t%s\tmp3\n' "$v" "$f" "queen/$v/$b"
  done >> "$L.part"
fi
# The same recording is often shipped under several names (Tux Paint's filled and outlined
# letters share descriptions): only the first copy (by the order above) is kept.
cut -f2 "$L.part" | tr '\n' '\0' | xargs -0 md5sum > "$U/lists/md5.txt"
awk -F'\t' 'NR == FNR { h[substr($0, 35)] = substr($0, 1, 32); next } !seen[h[$2]]++' "$U/lists/md5.txt" "$L.part" > "$L"
rm -f "$L.part"
echo "utterances: $(wc -l < "$L")"

# --- convert every utterance (skips existing ones) -------------------------------------------
conv1() {  # conv1 FORMAT IN OUT
  [ -s "$3" ] && return 0
  mkdir -p "$(dirname "$3")"
  local fmt=(); [ "$1" = - ] || fmt=(-f "$1")
  ffmpeg -nostdin -v error -y "${fmt[@]}" -i "$2" -ac 1 -af aresample=resampler=soxr -ar 16000 \
    -c:a pcm_s16le -fflags +bitexact -flags:a +bitexact -f wav "$3.part" && mv "$3.part" "$3" \
    || { echo "skip $2" >&2; rm -f "$3.part"; }
}
export -f conv1
awk -F'\t' -v U="$U" '{printf "%s\t%s\t%s/%s.wav\n", $4, $2, U, $3}' "$L" | tr '\t\n' '\0\0' \
  | xargs -0 -n 3 -P "$JOBS" bash -c 'conv1 "$@"' _

# --- pauses: silence files 0.20 ... 0.90 s ---------------------------------------------------
for c in $(seq 20 90); do
  s=$U/silence/sil_0.$c.wav
  [ -s "$s" ] || ffmpeg -nostdin -v error -y -f lavfi -i anullsrc=r=16000:cl=mono -t "0.$c" \
    -c:a pcm_s16le -fflags +bitexact -flags:a +bitexact "$s"
done

# --- group into clips ------------------------------------------------------------------------
# Per group, in sorted order: a clip is closed when it reaches its target length (20-40 s,
# seeded by group and clip number); a last rest under 10 s is added to the clip before it.
# Between utterances a pause of 0.20-0.90 s (seeded by the utterance's position).
# Durations come from the WAV sizes (16-bit mono 16 kHz, 44-byte header).
# Utterances with more than 1% of samples at full scale (clipped, distorted recordings: all of
# Tux Paint's Spanish descriptions, a few dozen others) are left out (lists/rejected.tsv).
python3 - "$L" "$U" <<'EOF2'
import os, sys, wave
import numpy as np
lst, u = sys.argv[1], sys.argv[2]
keep, rej = [], []
for line in open(lst):
    g, _, name, _ = line.rstrip("\n").split("\t")
    p = f"{u}/{name}.wav"
    if not os.path.exists(p) or os.path.getsize(p) <= 44: continue
    with wave.open(p) as w: x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    clipped = float(np.mean(np.abs(x.astype(np.int32)) >= 32000)) if len(x) else 0.0
    (rej if clipped > 0.01 else keep).append((g, p, os.path.getsize(p), clipped))
keep.sort(key=lambda r: r[0])  # stable: groups together, order kept
with open(f"{u}/lists/converted.tsv", "w") as f:
    for g, p, n, _ in keep: f.write(f"{g}\t{p}\t{n}\n")
with open(f"{u}/lists/rejected.tsv", "w") as f:
    for g, p, _, c in rej: f.write(f"{g}\t{p}\tclipped {c:.3f}\n")
print(f"kept {len(keep)} utterances, left out {len(rej)} (clipped)")
EOF2
rm -f "$U"/lists/clip__*.txt
awk -F'\t' -v U="$U" '
  function seed(s,   i, h) { h = 0; for (i = 1; i <= length(s); i++) h = (h * 31 + index("abcdefghijklmnopqrstuvwxyz_0123456789", substr(s, i, 1))) % 1000003; return h }
  function newclip() { c++; srand(seed(g) * 100 + c); target[c] = 20 + 20 * rand(); acc[c] = 0; k[c] = 0 }
  function flush(   j, name) {
    if (c == 0) return
    if (c > 1 && acc[c] < 10) { for (j = 1; j <= k[c]; j++) { item[c - 1, ++k[c - 1]] = item[c, j] } acc[c - 1] += acc[c]; c-- }
    for (j = 1; j <= c; j++) {
      if (acc[j] < 5) continue
      name = sprintf("%s/lists/clip__%s_%03d.txt", U, g, j - 1)
      for (i = 1; i <= k[j]; i++) print item[j, i] > name
      close(name)
    }
  }
  $1 != g { flush(); g = $1; c = 0; n = 0; newclip() }
  {
    d = ($3 - 44) / 32000; n++
    if (acc[c] >= target[c]) newclip()
    if (k[c] > 0) { srand(seed(g) * 7 + n); p = sprintf("%.2f", 0.2 + 0.7 * rand()); item[c, ++k[c]] = "file '\''" U "/silence/sil_" p ".wav'\''"; acc[c] += p }
    item[c, ++k[c]] = "file '\''" $2 "'\''"; acc[c] += d
  }
  END { flush() }' "$U/lists/converted.tsv"

shopt -s nullglob
for out in "$O"/*.wav; do  # clips of an earlier run that are no longer in the lists
  b=$(basename "$out" .wav); [ -f "$U/lists/clip__$b.txt" ] || rm -f "$out" "$U/lists/done__$b.txt"
done
for lst in "$U"/lists/clip__*.txt; do
  b=$(basename "$lst" .txt); out=$O/${b#clip__}.wav
  if [ -s "$out" ] && cmp -s "$lst" "$U/lists/done__${b#clip__}.txt"; then continue; fi
  ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$lst" -c:a pcm_s16le "$out" \
    && cp "$lst" "$U/lists/done__${b#clip__}.txt" || { echo "skip clip $b"; rm -f "$out"; }
done

# --- durations, quality proxies, summary -----------------------------------------------------
# durations.tsv: file, seconds. quality.tsv: file, seconds, RMS dBFS, and the share of 20 ms
# frames within 30 dB of the clip's loud frames (95th percentile): "active". Speech with pauses
# lands at roughly 0.5-0.9; a clip below 0.35 (mostly silence) or above 0.97 (no pauses, steady
# sound) or with RMS under -40 dBFS is listed as suspect.
python3 - "$O" <<'EOF'
import glob, os, sys, wave, collections
import numpy as np
o = sys.argv[1]
rows, mins, sus = [], collections.OrderedDict(), []
for p in sorted(glob.glob(f"{o}/*.wav")):
    with wave.open(p) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768
        sr = w.getframerate()
    sec = len(x) / sr
    rms = 20 * np.log10(np.sqrt(np.mean(x * x)) + 1e-12)
    fr = x[: len(x) // 320 * 320].reshape(-1, 320)
    e = 10 * np.log10(np.mean(fr * fr, axis=1) + 1e-12)
    act = float(np.mean(e > np.percentile(e, 95) - 30))
    name = os.path.basename(p)
    rows.append((name, sec, rms, act))
    if act < 0.35 or act > 0.97 or rms < -40: sus.append((name, round(float(sec), 1), round(float(rms), 1), round(act, 2)))
    src, rest = name[:-4].split("__")
    key = (src, rest.rsplit("_", 1)[0])
    mins[key] = mins.get(key, 0) + sec / 60
with open(f"{o}/durations.tsv", "w") as f:
    f.write("file\tseconds\n"); [f.write(f"{r[0]}\t{r[1]:.2f}\n") for r in rows]
with open(f"{o}/quality.tsv", "w") as f:
    f.write("file\tseconds\trms_dbfs\tactive\n"); [f.write(f"{r[0]}\t{r[1]:.2f}\t{r[2]:.1f}\t{r[3]:.3f}\n") for r in rows]
tot = collections.Counter()
for (s, k), m in mins.items(): tot[s] += m
for s in tot:
    print(f"{s}: {tot[s]:.1f} min  (" + ", ".join(f"{k} {m:.1f}" for (s2, k), m in mins.items() if s2 == s) + ")")
print(f"total: {sum(tot.values()):.1f} min in {len(rows)} clips")
print("suspect clips:", sus if sus else "none")
EOF
