# Home Manager module: programs.conversation-search.
#
# Exported by flake.nix as homeManagerModules.default (and homeModules.default).
#
# - Installs the package (home.packages).
# - Home Manager 25.11+ (has programs.claude-code.mcpServers): registers the
#   server there, so the claude-code module writes it into Claude Code's config
#   (takes effect with programs.claude-code.enable = true).
# - Home Manager 26.05+ (has programs.mcp.servers): registers it there too, for
#   every client that reads the shared MCP config.
# - Older Home Manager: only installs the package; evaluation does not fail.
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

  config = lib.mkIf cfg.enable (
    lib.mkMerge (
      [ { home.packages = [ cfg.package ]; } ]
      ++ lib.optional hasClaudeCode {
        programs.claude-code.mcpServers.conversation-search = {
          type = "stdio";
          inherit command args;
        };
      }
      # programs.mcp.servers is a typed submodule (command/args/env/url/...)
      # without a `type` field; clients that need it (claude-code) add it.
      ++ lib.optional hasMcp {
        programs.mcp.servers.conversation-search = {
          inherit command args;
        };
      }
    )
  );
}
