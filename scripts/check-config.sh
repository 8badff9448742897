#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail when an option a config fragment asks for did not survive
# olddefconfig: a silently dropped option turns into confusing test
# failures much later. As in merge_config.sh, a later fragment overrides
# what an earlier one says about the same option (configs/up.config
# turns off what vm.config turns on).
set -euo pipefail

config=$1
shift
declare -A from want
order=()
for frag in "$@"; do
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) ;;
		*) continue ;;
		esac
		opt=${line%%=*}
		[ -n "${want[$opt]+set}" ] || order+=("$opt")
		want[$opt]=$line
		from[$opt]=$frag
	done <"$frag"
done

bad=0
for opt in "${order[@]}"; do
	line=${want[$opt]}
	# An option that is off may also be absent: its menu is off.
	case $line in
	*=n) ! grep -q "^$opt=" "$config" ;;
	*) grep -qxF "$line" "$config" ;;
	esac && continue
	echo "config: ${from[$opt]} wants '$line', .config has" \
	     "'$(grep -E "^(# )?${opt}[= ]" "$config" || echo unset)'" >&2
	bad=1
done
exit $bad
