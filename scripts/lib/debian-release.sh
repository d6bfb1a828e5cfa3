# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Which Debian release this is, for the scripts that fetch from its archive
# (sourced; bash). NNP_OS_RELEASE names another os-release file (tests).
#   debian_codename   bookworm or trixie, or what os-release says
#   debian_major      12 for bookworm, 13 for trixie, empty for others
#   debian_pretty     os-release's PRETTY_NAME
debian_os_release=${NNP_OS_RELEASE:-/etc/os-release}

# shellcheck disable=SC1090 # os-release, or the file a test names
debian_codename() {
	(. "$debian_os_release" && echo "${VERSION_CODENAME:-}")
}

debian_major() {
	case "$(debian_codename)" in
	bookworm) echo 12 ;;
	trixie) echo 13 ;;
	esac
}

# shellcheck disable=SC1090 # as above
debian_pretty() {
	(. "$debian_os_release" && echo "${PRETTY_NAME:-not Debian}")
}
