# A tiny stand-in for nixpkgs, used ONLY by scripts/check-flake through
# `--override-input nixpkgs path:<copy of this dir>`: real nixpkgs cannot be
# fetched on the machines that run it.
#
# It offers just what ../../../flake.nix uses: `lib` (lib.nix: a small lib with a
# simplified module system) and `legacyPackages.<system>` (pkgs.nix), whose
# builders return real but unbuildable derivations (`nix flake check
# --no-build` instantiates them) and record their arguments under `.stub`, so
# check-flake can assert on what the flake asked for.
{
  description = "nixpkgs stand-in for offline flake checks (scripts/check-flake)";

  outputs =
    { self }:
    let
      lib = import ./lib.nix;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs systems (system: import ./pkgs.nix { inherit lib system; });
    };
}
