#!/usr/bin/env bash
# Gathers a third batch of non-speech training audio from Debian packages: recorded animal,
# household, vehicle and instrument sounds (Tux Paint's stamp sounds, not its spoken names or
# descriptions), drawing-tool sounds, and small games' effects. Human voices (spoken letters and
# digits, laughs, screams, grunts, spoken prompts) are left out so that only non-speech is
# labelled non-speech. Converted to 16 kHz mono 16-bit WAV in WORKDIR/wav/effects/fx3_*.wav
# (see SOURCES.md). Nothing here goes into the repository.
#   bash gather_effects.sh WORKDIR
set -euo pipefail
W=${1:?usage: gather_effects.sh WORKDIR}
mkdir -p "$W/debs3" "$W/x3" "$W/wav/effects"
PKGS="tuxpaint-stamps-default tuxpaint-data freedink-data kgoldrunner granatier kapman kbounce ksirk"
(cd "$W/debs3" && for p in $PKGS; do ls "${p}"_*.deb >/dev/null 2>&1 || apt-get download "$p"; done)
for d in "$W"/debs3/*.deb; do n=$(basename "$d" | cut -d_ -f1); [ -d "$W/x3/$n" ] || { mkdir -p "$W/x3/$n"; dpkg-deb -x "$d" "$W/x3/$n"; }; done

# clip OUT SECONDS FILE...: the files joined with 0.4 s gaps into one 16 kHz clip of at most
# SECONDS (temporary files of its own, so it can run beside gather.sh).
clip() {
  local out=$1 cap=$2; shift 2
  local tmp; tmp=$(mktemp -d "$W/fx3tmp.XXXXXX")
  local i=0
  for f in "$@"; do
    i=$((i + 1))
    ffmpeg -nostdin -v error -y -i "$f" -ac 1 -ar 16000 -af "aresample=resampler=soxr,apad=pad_dur=0.4" \
      -c:a pcm_s16le "$tmp/$i.wav" 2>/dev/null && echo "file '$tmp/$i.wav'" >> "$tmp/list.txt"
  done
  ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$tmp/list.txt" -t "$cap" -c:a pcm_s16le "$out" || echo "skip $out"
  rm -rf "$tmp"
}
# Tux Paint stamp sounds: the object's own sound is `NAME.ogg`; `NAME_LL.ogg` is its spoken name
# and `NAME_desc*.ogg` its spoken description (both speech, left out).
TP=$W/x3/tuxpaint-stamps-default/usr/share/tuxpaint/stamps
stamps() { find "$TP/$1" -name "*.ogg" | grep -vE '_desc|_[a-z]{2}(_[A-Z]{2})?\.ogg$' | sort; }
clip "$W/wav/effects/fx3_tuxpaint_animals.wav" 300 $(stamps animals)
clip "$W/wav/effects/fx3_tuxpaint_instruments.wav" 120 $(stamps hobbies/music)
clip "$W/wav/effects/fx3_tuxpaint_objects.wav" 240 $(stamps household) $(stamps vehicles) $(stamps space) \
  $(stamps naturalforces) "$TP/seasonal/newyears/fireworks.ogg" "$TP/hobbies/camera_35mm.ogg" "$TP/food/fruit/apple_red.ogg" \
  "$TP/seasonal/halloween/bat_left.ogg" "$TP/seasonal/halloween/blackcat.ogg" "$TP/seasonal/halloween/spider.ogg"
# Tux Paint's drawing tools (brushes, eraser, fill, magic tools), without its spoken prompts
# and Tux's giggle.
clip "$W/wav/effects/fx3_tuxpaint_tools.wav" 180 $(find "$W/x3/tuxpaint-data" -name "*.wav" -o -name "*.ogg" \
  | grep -vE '/(giggle|areyousure|youcannot|tuxok|prompt)\.' | sort)
# FreeDink's effects (weapons, doors, stairs, fire), without its grunts, scream and spoken lines,
# and without its music (the .ogg files).
clip "$W/wav/effects/fx3_freedink.wav" 120 $(find "$W/x3/freedink-data" -name "*.wav" \
  | grep -vE '/(grunt[0-9]*|wscream|nono|intro)\.wav$' | sort)
# KDE games' effects (explosions, steps, bounces, cannons), without Granatier's spoken "wow".
clip "$W/wav/effects/fx3_kde.wav" 120 $(find "$W/x3/kgoldrunner" "$W/x3/granatier" "$W/x3/kapman" "$W/x3/kbounce" "$W/x3/ksirk" \
  \( -name "*.wav" -o -name "*.ogg" \) | grep -vE '/wow\.wav$' | sort)
for f in "$W"/wav/effects/fx3_*.wav; do
  printf '%s %s s\n' "$(basename "$f")" "$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f")"
done
