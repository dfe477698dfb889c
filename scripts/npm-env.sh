# Sourced by the set-up scripts: clean_npm_env makes what they run independent of whether they were started by
# hand or by `npm run` (`npm run up`, `npm test`). `npm run` exports its resolved configuration as npm_config_*
# (npm_config_user_agent naming the Node that ran it, the prefix, the cache), npm_package_*, npm_lifecycle_*,
# INIT_CWD and NODE, and puts node_modules/.bin and its node-gyp shim first on PATH. An npm started from the script
# reads every npm_config_* back as its own settings, and passes them on to the install scripts it runs: code-server's
# refused to install because the user agent said Node 20 although Node 24 was running (issue 13).
# Only the lower-case names npm run writes are dropped: a user's own NPM_CONFIG_* (a registry mirror, a proxy) stays,
# and npm reads its .npmrc files again anyway.
clean_npm_env() {
  local name
  for name in $(compgen -e); do
    case $name in
      npm_* | INIT_CWD | NODE) unset "$name" ;;
    esac
  done
  local entry kept=()
  local IFS=:
  for entry in $PATH; do
    case $entry in
      */node_modules/.bin | */@npmcli/run-script/lib/node-gyp-bin) ;;
      *) kept+=("$entry") ;;
    esac
  done
  PATH="${kept[*]}"
  export PATH
}
