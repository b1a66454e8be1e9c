#!/usr/bin/env bash
# Checks that a CHANGELOG (default: CHANGELOG.md) is in the format of HashiCorp's providers, the one
# the Terraform and OpenTofu registries show: releases as `## X.Y.Z (Unreleased)` or
# `## X.Y.Z (Month D, YYYY)`, newest first; within a release, sections among BREAKING CHANGES:,
# NOTES:, FEATURES:, ENHANCEMENTS:, BUG FIXES:, each at most once, in that order, each with at
# least one `* ` entry. Prints each problem with its line number; exits 1 on any.
set -euo pipefail
file="${1:-CHANGELOG.md}"
awk -v file="$file" '
function problem(msg) { printf "%s:%d: %s\n", file, NR, msg > "/dev/stderr"; bad = 1 }
function close_section() {
  if (section != "" && entries == 0) { printf "%s:%d: section %s has no `* ` entry\n", file, section_line, section > "/dev/stderr"; bad = 1 }
  section = ""; entries = 0
}
BEGIN {
  n = split("BREAKING CHANGES:|NOTES:|FEATURES:|ENHANCEMENTS:|BUG FIXES:", names, "|")
  for (i = 1; i <= n; i++) rank[names[i]] = i
  months = "January|February|March|April|May|June|July|August|September|October|November|December"
}
/^```/ { fence = !fence; next }
fence { next }
/^## / {
  close_section()
  releases++
  if ($0 !~ "^## [0-9]+\\.[0-9]+\\.[0-9]+ \\((Unreleased|(" months ") [1-9][0-9]?, [0-9][0-9][0-9][0-9])\\)$")
    problem("release heading \"" $0 "\" is not `## X.Y.Z (Unreleased)` or `## X.Y.Z (Month D, YYYY)`")
  if ($0 ~ /Unreleased/ && releases > 1) problem("only the newest release can be Unreleased")
  last = 0; next
}
/^[A-Za-z][A-Za-z ]*:$/ {
  if (releases == 0) { problem("section " $0 " before any release heading"); next }
  close_section()
  if (!($0 in rank)) { problem("unknown section " $0 " (BREAKING CHANGES:, NOTES:, FEATURES:, ENHANCEMENTS:, BUG FIXES:)"); next }
  if (rank[$0] <= last) problem("section " $0 " out of order or repeated (BREAKING CHANGES:, NOTES:, FEATURES:, ENHANCEMENTS:, BUG FIXES:)")
  last = rank[$0]; section = $0; section_line = NR; next
}
/^\* / {
  if (section == "") problem("entry outside a section")
  entries++
}
END {
  close_section()
  if (releases == 0) { printf "%s: no release heading\n", file > "/dev/stderr"; bad = 1 }
  exit bad
}' "$file"
