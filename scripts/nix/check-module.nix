# Assertions on the Home Manager module (scripts/nix/home-manager.nix), run by
# scripts/check-flake through
#   nix eval --impure --json --override-input nixpkgs path:<stub> <flake>#homeManagerModules \
#     --apply 'ms: import <this file> { module = ms.default; ... }'
# so `module` is the flake's real output (its `self` is the flake evaluated on
# the nixpkgs stub). The module is evaluated with the stub's lib.evalModules
# next to stand-ins for Home Manager's options, in the combinations:
#   old HM (no claude-code.mcpServers, no mcp.servers), 25.11 (claude-code only),
#   26.05 (both), mcp only; enabled / disabled; defaults / every option set;
#   services.conversation-search on Linux (systemd) and Darwin (launchd).
# Returns { failures = [ strings ]; report = { ... }; }; check-flake fails
# unless failures is empty.
{
  module,
  # outPath of packages.<system>.default, as `nix eval` printed it, per system
  defaultOutPaths,
}:
let
  b = builtins;
  lib = import ./stub-nixpkgs/lib.nix;
  pkgsFor = system: import ./stub-nixpkgs/pkgs.nix { inherit lib system; };
  inherit (lib) mkOption types;

  # ---- stand-ins for the Home Manager options the module may touch ----------------
  # Every Home Manager release has these (systemd.user.services and launchd.agents on
  # every platform; their own assertions reject the wrong one, the module never sets it).
  homeOpts = {
    options.home.packages = mkOption {
      type = types.listOf types.package;
      default = [ ];
    };
    options.home.homeDirectory = mkOption {
      type = types.str;
      default = "/home/u";
    };
    options.systemd.user.services = mkOption {
      type = types.attrsOf types.anything;
      default = { };
    };
    options.launchd.agents = mkOption {
      type = types.attrsOf types.anything;
      default = { };
    };
  };
  # HM 25.11+: modules/programs/claude-code (mcpServers: attrsOf jsonFormat.type).
  claudeOpts = {
    options.programs.claude-code = {
      enable = lib.mkEnableOption "claude-code";
      mcpServers = mkOption {
        type = types.attrsOf types.anything;
        default = { };
      };
    };
  };
  # HM 26.05+: modules/programs/mcp.nix (servers: attrsOf (submodule { command;
  # args; env; envFiles; url; headers; disabled; })). The stub has no
  # submodules, so this type rejects any other field, like the submodule would.
  mcpServerFields = [
    "command"
    "args"
    "env"
    "envFiles"
    "url"
    "headers"
    "disabled"
  ];
  mcpOpts = {
    options.programs.mcp = {
      enable = lib.mkEnableOption "mcp";
      servers = mkOption {
        type = types.attrsOf (
          types.mkOptionType {
            name = "mcpServer";
            description = "MCP server submodule (${lib.concatStringsSep ", " mcpServerFields})";
            check = v: b.isAttrs v && b.all (n: b.elem n mcpServerFields) (b.attrNames v);
          }
        );
        default = { };
      };
    };
  };

  eval =
    {
      hm,
      settings,
      system ? "x86_64-linux",
      extra ? [ ],
    }:
    (lib.evalModules {
      modules = [
        module
        homeOpts
        { programs.conversation-search = settings; }
      ]
      ++ hm
      ++ extra;
      specialArgs.pkgs = pkgsFor system;
    }).config;

  hmOld = [ ];
  hm2511 = [ claudeOpts ];
  hm2605 = [
    claudeOpts
    mcpOpts
  ];
  hmMcpOnly = [ mcpOpts ];

  exe = outPath: "${outPath}/bin/conversation-search";
  defaultExe = exe defaultOutPaths.x86_64-linux;

  full = {
    enable = true;
    pattern = "*.jsonl";
    projectsDir = "/home/u/.claude/projects";
    sources = [
      "claude"
      "codex:/home/u/.codex/sessions"
      "opencode"
    ];
    debounceMs = 250;
    extraArgs = [
      "--extra"
      "x y"
    ];
  };
  fullArgs = [
    "serve"
    "*.jsonl"
    "--projects-dir"
    "/home/u/.claude/projects"
    "--source"
    "claude"
    "--source"
    "codex:/home/u/.codex/sessions"
    "--source"
    "opencode"
    "--debounce-ms"
    "250"
    "--extra"
    "x y"
  ];

  claudeOf = cfg: cfg.programs.claude-code.mcpServers;
  mcpOf = cfg: cfg.programs.mcp.servers;
  pkgPaths = cfg: map (p: p.outPath) cfg.home.packages;

  # Does evaluating `x` (deeply) succeed?
  evaluates = x: (b.tryEval (b.deepSeq x true)).success;

  cOld = eval {
    hm = hmOld;
    settings = full;
  };
  c2511 = eval {
    hm = hm2511;
    settings = full;
  };
  c2605 = eval {
    hm = hm2605;
    settings = full;
  };
  cMcp = eval {
    hm = hmMcpOnly;
    settings = full;
  };
  cOff = eval {
    hm = hm2605;
    settings = full // {
      enable = false;
    };
  };
  cDefaults = eval {
    hm = hm2605;
    settings.enable = true;
  };
  cDarwin = eval {
    hm = hm2605;
    settings.enable = true;
    system = "aarch64-darwin";
  };
  cUserServers = eval {
    hm = hm2605;
    settings.enable = true;
    extra = [
      {
        programs.claude-code.mcpServers.other = {
          type = "stdio";
          command = "other";
        };
      }
    ];
  };

  # ---- services.conversation-search ------------------------------------------------
  service = settings: { services.conversation-search = settings; };
  sLinux = eval {
    hm = hm2605;
    settings.enable = true;
    extra = [ (service { enable = true; }) ];
  };
  sFull = eval {
    hm = hm2605;
    settings = full;
    extra = [
      (service {
        enable = true;
        address = "127.0.0.1:7200";
        extraArgs = [ "--poll" ];
      })
    ];
  };
  sDarwin = eval {
    hm = hm2605;
    settings.enable = true;
    system = "aarch64-darwin";
    extra = [
      (service { enable = true; })
      { home.homeDirectory = "/Users/u"; }
    ];
  };
  sOnly = eval {
    hm = hm2605;
    settings = { };
    extra = [ (service { enable = true; }) ];
  };
  sOld = eval {
    hm = hmOld;
    settings.enable = true;
    extra = [ (service { enable = true; }) ];
  };
  sWildcard = eval {
    hm = hm2511;
    settings.enable = true;
    extra = [
      (service {
        enable = true;
        address = "0.0.0.0:7102";
        extraArgs = [
          "--allow-remote"
          "--token-file"
          "/run/t"
        ];
      })
    ];
  };
  unitOf = cfg: cfg.systemd.user.services;
  agentOf = cfg: cfg.launchd.agents;
  httpEntry = url: {
    conversation-search = {
      type = "http";
      inherit url;
    };
  };

  # Negative controls: they prove the stand-in module system really rejects what
  # the module must avoid, so the positive results above mean something.
  badUnconditional = {
    config = lib.mkIf false { programs.claude-code.mcpServers.x.command = "x"; };
  };
  controlMissing = eval {
    hm = hmOld;
    settings.enable = true;
    extra = [ badUnconditional ];
  };
  controlPresent = eval {
    hm = hm2511;
    settings.enable = true;
    extra = [ badUnconditional ];
  };
  controlTypeInMcp = eval {
    hm = hm2605;
    settings.enable = true;
    extra = [ { programs.mcp.servers.y = { type = "stdio"; command = "y"; }; } ];
  };
  badSource = eval {
    hm = hm2605;
    settings = {
      enable = true;
      sources = [ "bogus:/tmp" ];
    };
  };

  checks = [
    {
      name = "old HM: evaluates, installs the package, registers nothing";
      ok =
        evaluates (pkgPaths cOld)
        && pkgPaths cOld == [ defaultOutPaths.x86_64-linux ]
        && !(cOld.programs ? claude-code)
        && !(cOld.programs ? mcp);
      got = {
        packages = pkgPaths cOld;
        programs = b.attrNames cOld.programs;
      };
    }
    {
      name = "HM 25.11 (claude-code.mcpServers): registered as stdio with the mapped args";
      ok =
        claudeOf c2511 == {
          conversation-search = {
            type = "stdio";
            command = defaultExe;
            args = fullArgs;
          };
        }
        && !(c2511.programs ? mcp)
        && pkgPaths c2511 == [ defaultOutPaths.x86_64-linux ];
      got = claudeOf c2511;
    }
    {
      name = "HM 26.05 (claude-code + mcp): registered in both; mcp entry has only command/args";
      ok =
        claudeOf c2605 == claudeOf c2511
        && mcpOf c2605 == {
          conversation-search = {
            command = defaultExe;
            args = fullArgs;
          };
        };
      got = {
        claude = claudeOf c2605;
        mcp = mcpOf c2605;
      };
    }
    {
      name = "programs.mcp.servers without claude-code: registered in mcp only";
      ok = mcpOf cMcp == mcpOf c2605 && !(cMcp.programs ? claude-code);
      got = mcpOf cMcp;
    }
    {
      name = "enable = false: nothing installed or registered";
      ok = pkgPaths cOff == [ ] && claudeOf cOff == { } && mcpOf cOff == { };
      got = {
        packages = pkgPaths cOff;
        claude = claudeOf cOff;
        mcp = mcpOf cOff;
      };
    }
    {
      name = "defaults: args = [ serve ], package = the flake's packages.<system>.default";
      ok =
        (claudeOf cDefaults).conversation-search.args == [ "serve" ]
        && (claudeOf cDefaults).conversation-search.command == defaultExe
        && (mcpOf cDefaults).conversation-search.args == [ "serve" ];
      got = claudeOf cDefaults;
    }
    {
      name = "default package follows pkgs' system (aarch64-darwin)";
      ok = (claudeOf cDarwin).conversation-search.command == exe defaultOutPaths.aarch64-darwin;
      got = (claudeOf cDarwin).conversation-search.command;
    }
    {
      name = "merges with the user's own mcpServers";
      ok = b.attrNames (claudeOf cUserServers) == [
        "conversation-search"
        "other"
      ];
      got = b.attrNames (claudeOf cUserServers);
    }
    {
      name = "sources are validated (FORMAT[:PATH], FORMAT in claude|openclaw|codex|gemini|opencode)";
      ok = !(evaluates (claudeOf badSource));
      got = "bogus:/tmp rejected: ${b.toJSON (!(evaluates (claudeOf badSource)))}";
    }
    {
      name = "service off: no systemd unit, no launchd agent";
      ok = unitOf cDefaults == { } && agentOf cDefaults == { } && unitOf cDarwin == { };
      got = {
        unit = unitOf cDefaults;
        agent = agentOf cDefaults;
      };
    }
    {
      name = "service (Linux): a systemd user unit runs `serve --http 127.0.0.1:7102`; no launchd agent";
      ok =
        (unitOf sLinux).conversation-search.Service.ExecStart == "${defaultExe} serve --http 127.0.0.1:7102"
        && (unitOf sLinux).conversation-search.Service.Restart == "on-failure"
        && (unitOf sLinux).conversation-search.Install.WantedBy == [ "default.target" ]
        && agentOf sLinux == { };
      got = {
        unit = unitOf sLinux;
        agent = agentOf sLinux;
      };
    }
    {
      name = "service: Claude Code gets { type = http; url = http://127.0.0.1:7102/mcp } instead of stdio; mcp gets the url only";
      ok =
        claudeOf sLinux == httpEntry "http://127.0.0.1:7102/mcp"
        && mcpOf sLinux == {
          conversation-search.url = "http://127.0.0.1:7102/mcp";
        };
      got = {
        claude = claudeOf sLinux;
        mcp = mcpOf sLinux;
      };
    }
    {
      name = "service with every option: programs' mapped args, then --http ADDR, then its extraArgs (quoted); url follows the address";
      ok =
        (unitOf sFull).conversation-search.Service.ExecStart
        == "${defaultExe} serve '*.jsonl' --projects-dir /home/u/.claude/projects --source claude --source codex:/home/u/.codex/sessions --source opencode --debounce-ms 250 --extra 'x y' --http 127.0.0.1:7200 --poll"
        && claudeOf sFull == httpEntry "http://127.0.0.1:7200/mcp";
      got = {
        exec = (unitOf sFull).conversation-search.Service.ExecStart;
        claude = claudeOf sFull;
      };
    }
    {
      name = "service (Darwin): a launchd agent runs the darwin package with `serve --http 127.0.0.1:7102`; no systemd unit";
      ok =
        (agentOf sDarwin).conversation-search == {
          enable = true;
          config = {
            ProgramArguments = [
              (exe defaultOutPaths.aarch64-darwin)
              "serve"
              "--http"
              "127.0.0.1:7102"
            ];
            RunAtLoad = true;
            KeepAlive.SuccessfulExit = false;
            ProcessType = "Background";
            StandardErrorPath = "/Users/u/Library/Logs/conversation-search.log";
          };
        }
        && unitOf sDarwin == { }
        && claudeOf sDarwin == httpEntry "http://127.0.0.1:7102/mcp";
      got = {
        agent = agentOf sDarwin;
        unit = unitOf sDarwin;
      };
    }
    {
      name = "service alone (programs.conversation-search off): runs and is registered, nothing installed";
      ok =
        unitOf sOnly ? conversation-search
        && claudeOf sOnly == httpEntry "http://127.0.0.1:7102/mcp"
        && pkgPaths sOnly == [ ];
      got = {
        packages = pkgPaths sOnly;
        claude = claudeOf sOnly;
      };
    }
    {
      name = "service on old HM: the unit runs, nothing is registered, evaluation does not fail";
      ok =
        evaluates (unitOf sOld)
        && unitOf sOld ? conversation-search
        && !(sOld.programs ? claude-code)
        && !(sOld.programs ? mcp);
      got = b.attrNames (unitOf sOld);
    }
    {
      name = "service on a wildcard address: clients are pointed at loopback";
      ok =
        claudeOf sWildcard == httpEntry "http://127.0.0.1:7102/mcp"
        && (unitOf sWildcard).conversation-search.Service.ExecStart
        == "${defaultExe} serve --http 0.0.0.0:7102 --allow-remote --token-file /run/t";
      got = {
        claude = claudeOf sWildcard;
        exec = (unitOf sWildcard).conversation-search.Service.ExecStart;
      };
    }
    {
      name = "control: stand-in rejects a definition of a missing option, even under mkIf false";
      ok = !(evaluates (pkgPaths controlMissing)) && evaluates (pkgPaths controlPresent);
      got = {
        missingRejected = !(evaluates (pkgPaths controlMissing));
        presentAccepted = evaluates (pkgPaths controlPresent);
      };
    }
    {
      name = "control: stand-in mcp.servers type rejects a `type` field";
      ok = !(evaluates (mcpOf controlTypeInMcp));
      got = "rejected: ${b.toJSON (!(evaluates (mcpOf controlTypeInMcp)))}";
    }
  ];

  # A failing check must not abort the whole report: evaluate each defensively.
  results = map (
    c:
    let
      r = b.tryEval (b.deepSeq c.ok c.ok);
    in
    {
      inherit (c) name;
      ok = r.success && r.value;
      got =
        let
          g = b.tryEval (b.deepSeq c.got c.got);
        in
        if g.success then g.value else "<evaluation error>";
    }
  ) checks;
in
{
  failures = map (r: r.name) (b.filter (r: !r.ok) results);
  inherit results;
}
