#!/usr/bin/env bash
# check_f16_ram.sh F32-DIR F16-DIR - the float16 training image (F16-DIR, cfg.dtype float16)
# needs less RAM (.data + .bss of firmware.elf) than the float32 one (F32-DIR), by exactly
# the difference of the pools their plans (fw_pools.h) ask for.
set -euo pipefail
ram() { arm-none-eabi-size "$1/firmware.elf" | awk 'NR == 2 { print $2 + $3 }'; }
pools() {
  sed -n 's/^#define IPUP_PLAN_\(IPU[0-9][0-9]*\|HOST\)_BYTES \([0-9][0-9]*\).*/\2/p' "$1/fw_pools.h" |
    awk '{ s += $1 } END { print s + 0 }'
}
r32=$(ram "$1") r16=$(ram "$2") p32=$(pools "$1") p16=$(pools "$2")
if [ $((r32 - r16)) -gt 0 ] && [ $((r32 - r16)) -eq $((p32 - p16)) ]; then
  echo "firmware-f16: RAM (.data + .bss) $r32 -> $r16 bytes, $((r32 - r16)) less, what the" \
       "plans' pools differ by ($p32 -> $p16)"
else
  echo "FAIL firmware-f16: RAM (.data + .bss) $r32 -> $r16 bytes ($((r32 - r16)) less), but the" \
       "plans' pools $p32 -> $p16 ($((p32 - p16)) less)"
  exit 1
fi
