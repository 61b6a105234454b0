#!/usr/bin/env bash
# Gathers extra training audio from Debian packages (see SOURCES.md for what and why), converted
# to 16 kHz mono 16-bit WAV with ffmpeg (soxr). Nothing here goes into the repository.
#   bash gather.sh WORKDIR
# Reserved for checking, never used here: singularity-music, openttd-opensfx, shared/data/real-dev.
set -euo pipefail
W=${1:?usage: gather.sh WORKDIR}
mkdir -p "$W/debs" "$W/x" "$W/wav"
PKGS="fillets-ng-data-cs fillets-ng-data-nl klettres-data lincity-ng-data extremetuxracer-data frozen-bubble-data pingus-data tuxtype-data lmms-common warzone2100-music
      trigger-rally-data warzone2100-data scorched3d-data crrcsim-data stormbaancoureur-data bzflag-data teeworlds-data marsshooter-data"
(cd "$W/debs" && apt-get download $PKGS)
for d in "$W"/debs/*.deb; do n=$(basename "$d" | cut -d_ -f1); mkdir -p "$W/x/$n"; dpkg-deb -x "$d" "$W/x/$n"; done

conv() {  # conv IN OUT [ffmpeg input options...]: 16 kHz mono, at most 40 s from 20 s in (or the start)
  local in=$1 out=$2; shift 2
  local dur; dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$in" 2>/dev/null || echo 0)
  local ss=0; if awk "BEGIN{exit !($dur > 70)}"; then ss=20; fi
  ffmpeg -nostdin -v error -y -ss $ss -t 40 -i "$in" -ac 1 -af aresample=resampler=soxr -ar 16000 -c:a pcm_s16le "$out" \
    || { echo "skip $in"; rm -f "$out"; }
}
name() { echo "$1" | sed 's|.*/||; s|\.[^.]*$||; s|[^A-Za-z0-9]|_|g'; }

mkdir -p "$W/wav/music" "$W/wav/effects" "$W/wav/speech_syll" "$W/wav/speech_dialogue"
# Music: game soundtracks (several genres) and LMMS instrument/loop samples.
for f in "$W"/x/extremetuxracer-data/usr/share/games/etr/music/*; do conv "$f" "$W/wav/music/etr__$(name "$f").wav"; done
for f in "$W"/x/pingus-data/usr/share/games/pingus/data/music/*; do conv "$f" "$W/wav/music/pingus__$(name "$f").wav"; done
for f in "$W"/x/lincity-ng-data/usr/share/games/lincity-ng/music/default/*.ogg; do conv "$f" "$W/wav/music/lincity__$(name "$f").wav"; done
for f in "$W"/x/warzone2100-music/usr/share/games/warzone2100/music/albums/*/*.opus; do
  a=$(basename "$(dirname "$f")"); conv "$f" "$W/wav/music/warzone__${a}_$(name "$f").wav"; done
# LMMS loops and instrument samples: concatenated per folder into one clip.
for dir in bassloops beats drums instruments latin stringsnpads basses misc; do
  ls "$W"/x/lmms-common/usr/share/lmms/samples/$dir/* >/dev/null 2>&1 || continue
  : > "$W/lmms_$dir.txt"
  for f in "$W"/x/lmms-common/usr/share/lmms/samples/$dir/*; do echo "file '$f'" >> "$W/lmms_$dir.txt"; done
  ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$W/lmms_$dir.txt" -ac 1 -af aresample=resampler=soxr -ar 16000 -t 60 \
    -c:a pcm_s16le "$W/wav/music/lmms__$dir.wav" || echo "skip lmms $dir"
done
# effects_clip OUT SECONDS LOOP FILE...: the files joined with 0.3 s gaps into one 16 kHz clip of at
# most SECONDS; with LOOP=1 a file shorter than 2 s (an engine, fan or wind loop) is repeated to
# about 4 s so it is heard as sustained sound.
effects_clip() {
  local out=$1 cap=$2 loop=$3; shift 3
  local list; list="$W/fx_$(basename "$out" .wav).txt"
  : > "$list"; local i=0
  for f in "$@"; do
    i=$((i + 1)); local t="$W/tmp_fx_$i.wav" n=0
    if [ "$loop" = 1 ]; then
      local dur; dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f" 2>/dev/null || echo 0)
      if awk "BEGIN{exit !($dur > 0 && $dur < 2)}"; then n=$(awk "BEGIN{print int(4 / $dur)}"); fi
    fi
    ffmpeg -nostdin -v error -y -stream_loop $n -i "$f" -ac 1 -ar 16000 -af "aresample=resampler=soxr,apad=pad_dur=0.3" \
      -c:a pcm_s16le "$t" 2>/dev/null && echo "file '$t'" >> "$list"
  done
  ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$list" -t "$cap" -c:a pcm_s16le "$out" || echo "skip $out"
  rm -f "$W"/tmp_fx_*.wav
}
# Effects: game sound effects, concatenated per package with short gaps.
for src in "lincity:lincity-ng-data/usr/share/games/lincity-ng/sounds" "etr:extremetuxracer-data/usr/share/games/etr/sounds" \
           "frozenbubble:frozen-bubble-data/usr/share/games/frozen-bubble/snd" "pingus:pingus-data/usr/share/games/pingus/data/sounds" \
           "tuxtype:tuxtype-data/usr/share/tuxtype/sounds"; do
  effects_clip "$W/wav/effects/${src%%:*}.wav" 120 0 "$W/x/${src#*:}"/*
done
# Effects, second batch (engines, vehicles, wind, machinery, weapons, impacts, foley): game
# sound effects from packages not used before, short loops repeated; voice lines (co-driver calls,
# announcers, unit acknowledgements, character voices) are left out so only non-speech is
# labelled non-speech.
fx2() { effects_clip "$W/wav/effects/fx2_$1.wav" 180 1 "${@:2}"; }
X=$W/x
mkdir -p "$W/fx2zip"
unzip -q -o "$X/trigger-rally-data/usr/share/games/trigger-rally/data.zip" 'sounds/*' -x 'sounds/codriver/*' -d "$W/fx2zip/trigger"
unzip -q -o "$X/warzone2100-data/usr/share/games/warzone2100/base.wz" 'audio/sfx/*' -d "$W/fx2zip/warzone"
fx2 trigger "$W"/fx2zip/trigger/sounds/*.wav
fx2 warzone $(find "$W/fx2zip/warzone/audio/sfx" -name "*.ogg" | sort)
fx2 scorched3d $(find "$X/scorched3d-data" -path "*/data/wav/*" -name "*.wav" | sort)
fx2 crrcsim $(find "$X/crrcsim-data" -name "*.wav" ! -path "*/f3f/*" | sort) $(find "$X/stormbaancoureur-data" -name "*.wav" | sort)   # f3f/: spoken counts
fx2 bzflag $(find "$X/bzflag-data" -name "*.wav" ! -name "killteam.wav" ! -name "flag_lost.wav" ! -name "flag_won.wav" | sort)   # voice-like cries left out
fx2 teeworlds $(find "$X/teeworlds-data" -name "*.wv" ! -name "vo_*" ! -name "music*" | sort)
fx2 marsshooter $(find "$X/marsshooter-data" \( -path "*/audio/toon/*" -o -path "*/audio/interface/*" \) -name "*.ogg" -o \( -path "*/audio/toon/*" -name "*.wav" \) | sort)
# Speech: KLettres letters and syllables recorded by native speakers, ~20 languages; per language
# concatenated with 0.15-0.9 s pauses (pseudo-random, seeded by position) into one clip.
for dir in "$W"/x/klettres-data/usr/share/klettres/*/; do
  lang=$(basename "$dir"); [ -d "$dir/alpha" ] || [ -d "$dir/syllab" ] || continue
  : > "$W/kl_$lang.txt"; i=0
  for f in $(find "$dir" -name "*.ogg" | sort | head -150); do
    i=$((i + 1)); pad=$(awk -v i=$i 'BEGIN{srand(i); printf "%.2f", 0.15 + 0.75 * rand()}')
    t="$W/tmp_kl_${lang}_$i.wav"
    ffmpeg -nostdin -v error -y -i "$f" -ac 1 -ar 16000 -af "aresample=resampler=soxr,apad=pad_dur=$pad" -c:a pcm_s16le "$t" && echo "file '$t'" >> "$W/kl_$lang.txt"
  done
  ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$W/kl_$lang.txt" -c:a pcm_s16le "$W/wav/speech_syll/klettres__$lang.wav" || echo "skip kl $lang"
  rm -f "$W"/tmp_kl_*.wav
done
# Speech: Fish Fillets NG dubbing (Czech and Dutch, many actors and characters, expressive
# dialogue). 480 lines per language (every 7th, sorted), in clips of 24 lines joined with
# 0.1-0.8 s pauses (seeded), labelled by the corpus's energy rule in train_spectral.py.
for lang in cs nl; do
  files=$(find "$W"/x/fillets-ng-data-$lang -name "*.ogg" | sort | awk 'NR % 7 == 0' | head -480)
  i=0; clip=0; : > "$W/fl_${lang}_0.txt"
  for f in $files; do
    i=$((i + 1)); pad=$(awk -v i=$i 'BEGIN{srand(i + 7); printf "%.2f", 0.1 + 0.7 * rand()}')
    t="$W/tmp_fl_${lang}_$i.wav"
    ffmpeg -nostdin -v error -y -i "$f" -ac 1 -ar 16000 -af "aresample=resampler=soxr,apad=pad_dur=$pad" -c:a pcm_s16le "$t" \
      && echo "file '$t'" >> "$W/fl_${lang}_$clip.txt"
    if [ $((i % 24)) -eq 0 ]; then
      ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$W/fl_${lang}_$clip.txt" -c:a pcm_s16le "$W/wav/speech_dialogue/fillets__${lang}_$clip.wav" || echo "skip fillets $lang $clip"
      clip=$((clip + 1)); : > "$W/fl_${lang}_$clip.txt"
    fi
  done
  rm -f "$W"/tmp_fl_*.wav
done
ls "$W"/wav/* | head -100
