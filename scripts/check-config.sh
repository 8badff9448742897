#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail when an option a config fragment asks for did not survive
# olddefconfig: a silently dropped option turns into confusing test
# failures much later.
set -euo pipefail

config=$1
shift
bad=0
for frag in "$@"; do
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n) want="# ${line%=n} is not set" ;;
		CONFIG_*=*) want=$line ;;
		*) continue ;;
		esac
		if ! grep -qxF "$want" "$config"; then
			echo "config: $frag wants '$line', .config has" \
			     "'$(grep -E "^(# )?${line%%=*}[= ]" "$config" || echo unset)'" >&2
			bad=1
		fi
	done <"$frag"
done
exit $bad
