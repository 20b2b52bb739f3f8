# Home Manager module: programs.conversation-search and services.conversation-search.
#
# Exported by flake.nix as homeManagerModules.default (and homeModules.default).
#
# - programs.conversation-search: installs the package (home.packages).
# - services.conversation-search: runs `conversation-search serve --http ADDR`
#   (the programs.* options apply to it too) as a systemd user service on Linux
#   or a launchd agent on Darwin: one server, one index, for every client.
# - Home Manager 25.11+ (has programs.claude-code.mcpServers): registers the
#   server there, so the claude-code module writes it into Claude Code's config
#   (takes effect with programs.claude-code.enable = true): as a stdio command,
#   or as { type = "http"; url = "http://ADDR/mcp"; } when the service is on.
# - Home Manager 26.05+ (has programs.mcp.servers): registers it there too, for
#   every client that reads the shared MCP config (command/args, or url).
# - Older Home Manager: only installs the package (and runs the service);
#   evaluation does not fail.
#
# ~/.claude.json is never managed as a file: Claude Code rewrites it itself.
#
# Detection reads the module system's `options` argument. It is applied with
# `optional` on the *list given to mkMerge*, not with mkIf around the
# definition: a definition of an option that does not exist is an error even
# under `mkIf false`, because the module system pushes mkIf down to the leaves
# and rejects unknown option paths before looking at the condition.
{ self }:
{
  config,
  lib,
  pkgs,
  options,
  ...
}:
let
  inherit (lib) mkOption types;

  cfg = config.programs.conversation-search;
  scfg = config.services.conversation-search;
  inherit (pkgs.stdenv.hostPlatform) isLinux isDarwin;

  hasClaudeCode = options ? programs.claude-code.mcpServers;
  hasMcp = options ? programs.mcp.servers;

  sourceFormats = [
    "claude"
    "openclaw"
    "codex"
    "gemini"
    "opencode"
  ];

  # `conversation-search serve [PATTERN] [--projects-dir DIR] [--source FORMAT[:PATH]]...
  #  [--debounce-ms N] [extraArgs...]`
  args =
    [ "serve" ]
    ++ lib.optional (cfg.pattern != null) cfg.pattern
    ++ lib.optionals (cfg.projectsDir != null) [
      "--projects-dir"
      cfg.projectsDir
    ]
    ++ lib.concatMap (source: [
      "--source"
      source
    ]) cfg.sources
    ++ lib.optionals (cfg.debounceMs != null) [
      "--debounce-ms"
      (toString cfg.debounceMs)
    ]
    ++ cfg.extraArgs;

  command = lib.getExe cfg.package;

  # Register the HTTP server instead of a stdio command (scripts/check-flake's
  # self-test rewrites this line).
  useHttp = scfg.enable;

  # The service: the same arguments plus `--http ADDR`, then its own extras.
  serviceArgv = [
    (lib.getExe scfg.package)
  ]
  ++ args
  ++ [
    "--http"
    scfg.address
  ]
  ++ scfg.extraArgs;

  # What clients connect to: a wildcard address is reached on loopback.
  url =
    let
      connect = builtins.replaceStrings [ "0.0.0.0:" "[::]:" ] [ "127.0.0.1:" "[::1]:" ] scfg.address;
    in
    "http://${connect}/mcp";

  # Quoting for systemd's ExecStart (the same as nixpkgs' lib.escapeShellArgs).
  escape =
    arg:
    if builtins.match "[[:alnum:],._+:@%/-]+" arg != null then
      arg
    else
      "'${builtins.replaceStrings [ "'" ] [ "'\\''" ] arg}'";
in
{
  options.programs.conversation-search = {
    enable = lib.mkEnableOption "conversation-search, the MCP server for searching past coding-agent sessions";

    package = mkOption {
      type = types.package;
      default = self.packages.${pkgs.stdenv.hostPlatform.system}.default;
      defaultText = lib.literalExpression "conversation-search.packages.\${pkgs.stdenv.hostPlatform.system}.default";
      description = "The conversation-search package to install and run.";
    };

    pattern = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = "*.jsonl";
      description = "Positional PATTERN passed to `conversation-search serve`; null leaves it out.";
    };

    projectsDir = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = lib.literalExpression ''"''${config.home.homeDirectory}/.claude/projects"'';
      description = "Passed as `--projects-dir`; null uses the server's default.";
    };

    sources = mkOption {
      type = types.listOf (types.strMatching "^(${lib.concatStringsSep "|" sourceFormats})(:.*)?$");
      default = [ ];
      example = [
        "claude"
        "codex:/home/me/.codex/sessions"
      ];
      description = ''
        Transcript sources, each passed as `--source FORMAT[:PATH]`, with FORMAT one of
        ${lib.concatStringsSep ", " sourceFormats}. Empty uses the server's default.
      '';
    };

    debounceMs = mkOption {
      type = types.nullOr types.ints.unsigned;
      default = null;
      example = 500;
      description = "Passed as `--debounce-ms`; null uses the server's default.";
    };

    extraArgs = mkOption {
      type = types.listOf types.str;
      default = [ ];
      description = "Extra arguments appended after all the others.";
    };
  };

  options.services.conversation-search = {
    enable = lib.mkEnableOption ''
      conversation-search as one shared MCP server over HTTP (a systemd user service on
      Linux, a launchd agent on Darwin), registered with Claude Code by URL instead of as a
      stdio command. The programs.conversation-search options (pattern, projectsDir,
      sources, debounceMs, extraArgs) apply to it too'';

    package = mkOption {
      type = types.package;
      default = cfg.package;
      defaultText = lib.literalExpression "config.programs.conversation-search.package";
      description = "The conversation-search package the service runs.";
    };

    address = mkOption {
      type = types.str;
      default = "127.0.0.1:7102";
      example = "127.0.0.1:7200";
      description = ''
        Passed as `--http ADDR`; clients connect to http://ADDR/mcp. A non-loopback
        address also needs `--allow-remote` and `--token-file FILE` in extraArgs (and is
        then not registered usefully: clients must send the token).
      '';
    };

    extraArgs = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [
        "--token-file"
        "/run/user/1000/conversation-search.token"
      ];
      description = "Extra arguments for the service, after `--http ADDR`.";
    };
  };

  config = lib.mkMerge [
    (lib.mkIf cfg.enable { home.packages = [ cfg.package ]; })

    (lib.mkIf (cfg.enable || scfg.enable) (
      lib.mkMerge (
        lib.optional hasClaudeCode {
          programs.claude-code.mcpServers.conversation-search =
            if useHttp then
              {
                type = "http";
                inherit url;
              }
            else
              {
                type = "stdio";
                inherit command args;
              };
        }
        # programs.mcp.servers is a typed submodule (command/args/env/url/...)
        # without a `type` field; clients that need it (claude-code) add it.
        ++ lib.optional hasMcp {
          programs.mcp.servers.conversation-search =
            if useHttp then { inherit url; } else { inherit command args; };
        }
      )
    ))

    (lib.mkIf scfg.enable (
      lib.mkMerge (
        lib.optional isLinux {
          systemd.user.services.conversation-search = {
            Unit = {
              Description = "conversation-search: MCP server for past coding-agent sessions (HTTP)";
            };
            Service = {
              ExecStart = lib.concatStringsSep " " (map escape serviceArgv);
              Restart = "on-failure";
              RestartSec = 5;
              # SIGTERM: in-flight requests finish, the process exits within 2 s
              TimeoutStopSec = 10;
            };
            Install.WantedBy = [ "default.target" ];
          };
        }
        ++ lib.optional isDarwin {
          launchd.agents.conversation-search = {
            enable = true;
            config = {
              ProgramArguments = serviceArgv;
              RunAtLoad = true;
              KeepAlive.SuccessfulExit = false;
              ProcessType = "Background";
              StandardErrorPath = "${config.home.homeDirectory}/Library/Logs/conversation-search.log";
            };
          };
        }
      )
    ))
  ];
}
