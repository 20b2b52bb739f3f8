# Stand-in for nixpkgs.legacyPackages.${system} (see flake.nix here).
#
# Every package or builder result is a real derivation (so `nix flake check
# --no-build` can instantiate it) whose builder only fails: nothing here can
# be built. Builders keep what they were called with in `.stub`:
#   { builder = "buildRustPackage" | "mkShell" | "runCommand" | "package";
#     args = <the arguments>; hostPlatform = <platform it builds for>; }
{ lib, system }:
let
  isLinux = lib.hasSuffix "-linux" system;
  isDarwin = lib.hasSuffix "-darwin" system;
  cpu = builtins.head (lib.splitString "-" system);

  mkPlatform =
    { static }:
    {
      inherit system isLinux isDarwin;
      isStatic = static;
      isMusl = static;
      libc =
        if static then
          "musl"
        else if isLinux then
          "glibc"
        else
          "libSystem";
      config =
        if isDarwin then
          "${cpu}-apple-darwin"
        else if static then
          "${cpu}-unknown-linux-musl"
        else
          "${cpu}-unknown-linux-gnu";
    };

  mkStubDrv =
    {
      name,
      builder,
      args,
      hostPlatform,
      extra ? { },
    }:
    let
      drv = derivation {
        inherit name system;
        builder = "/bin/sh";
        args = [
          "-c"
          "echo 'this derivation comes from the nixpkgs stub of scripts/check-flake and cannot be built' >&2; exit 1"
        ];
        # So that e.g. the static and the dynamic build are distinct derivations.
        stubBuilder = builder;
        stubHostPlatform = hostPlatform.config;
        stubDoCheck = if (args.doCheck or true) then "1" else "";
      };
    in
    drv
    // extra
    // {
      stub = { inherit builder args hostPlatform; };
    };

  mkPkgs =
    { static }:
    let
      hostPlatform = mkPlatform { inherit static; };

      tool =
        name: mainProgram:
        mkStubDrv {
          inherit name hostPlatform;
          builder = "package";
          args = { };
          extra = {
            pname = name;
            version = "0-stub";
            meta = { inherit mainProgram; };
          };
        };

      buildRustPackage =
        args:
        # The arguments real buildRustPackage cannot do without.
        assert lib.assertMsg (args ? pname && args ? version) "stub buildRustPackage: pname and version are required";
        assert lib.assertMsg (args ? src) "stub buildRustPackage: src is required";
        assert lib.assertMsg (
          args ? cargoLock || args ? cargoHash || args ? cargoDeps
        ) "stub buildRustPackage: one of cargoLock, cargoHash, cargoDeps is required";
        mkStubDrv {
          name = "${args.pname}-${args.version}";
          builder = "buildRustPackage";
          inherit args hostPlatform;
          extra = {
            inherit (args) pname version src;
            meta = args.meta or { };
            doCheck = args.doCheck or true;
          };
        };
    in
    {
      inherit lib system;
      stdenv = {
        inherit hostPlatform isLinux isDarwin;
        buildPlatform = mkPlatform { static = false; };
        targetPlatform = hostPlatform;
      };

      rustPlatform = {
        inherit buildRustPackage;
        rustLibSrc = tool "rust-lib-src" "none";
      };

      mkShell =
        args:
        mkStubDrv {
          name = args.name or "nix-shell";
          builder = "mkShell";
          inherit args hostPlatform;
        };

      runCommand =
        name: env: script:
        mkStubDrv {
          inherit name hostPlatform;
          builder = "runCommand";
          args = { inherit name env script; };
        };

      cargo = tool "cargo" "cargo";
      rustc = tool "rustc" "rustc";
      clippy = tool "clippy" "cargo-clippy";
      rustfmt = tool "rustfmt" "rustfmt";
      rust-analyzer = tool "rust-analyzer" "rust-analyzer";
      nixfmt = tool "nixfmt" "nixfmt";
      installShellFiles = tool "install-shell-files" "none";
    };

  pkgs = mkPkgs { static = false; };
in
pkgs
// {
  # Real nixpkgs has pkgsStatic for Darwin too, but it does not produce
  # working static binaries there; the stub refuses it so that check-flake
  # proves the flake only reaches for it on Linux.
  pkgsStatic =
    if isLinux then
      mkPkgs { static = true; }
    else
      throw "nixpkgs stub: pkgsStatic used on ${system}; the flake must use the normal build on Darwin";
}
