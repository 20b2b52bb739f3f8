# Turns the flake's outputs, evaluated on the nixpkgs stub, into plain JSON
# for scripts/check-flake to assert on (with jq). Used as
#   nix eval --impure --json <flake>#packages --apply '(import <this file>).packages'
# The stub's builders keep their arguments under `.stub` (stub-nixpkgs/pkgs.nix).
let
  b = builtins;

  # Every regular file below `dir`, relative to it (what lib.fileset.toSource kept).
  listFiles =
    dir:
    let
      go =
        prefix: path:
        b.concatLists (
          b.attrValues (
            b.mapAttrs (
              name: type:
              let
                rel = if prefix == "" then name else "${prefix}/${name}";
              in
              if type == "directory" then go rel "${path}/${name}" else [ rel ]
            ) (b.readDir path)
          )
        );
    in
    go "" dir;

  platform = p: {
    inherit (p.stub.hostPlatform)
      config
      isStatic
      libc
      system
      ;
  };

  rustPackage =
    p:
    let
      a = p.stub.args;
    in
    platform p
    // {
      builder = p.stub.builder;
      inherit (a) pname version;
      out = p.outPath;
      doCheck = a.doCheck or true;
      buildType = a.buildType or "release";
      mainProgram = a.meta.mainProgram or null;
      description = a.meta.description or null;
      license = a.meta.license.spdxId or null;
      cargoLockFile = if a ? cargoLock.lockFile then b.baseNameOf (toString a.cargoLock.lockFile) else null;
      cargoLockSha256 = if a ? cargoLock.lockFile then b.hashFile "sha256" a.cargoLock.lockFile else null;
      srcFiles = listFiles "${a.src}";
      preCheck = a.preCheck or "";
      buildPhase = a.buildPhase or null;
      nativeBuildInputs = map (d: d.pname or d.name) (a.nativeBuildInputs or [ ]);
    };
in
{
  packages = b.mapAttrs (_system: b.mapAttrs (_name: rustPackage));

  apps = b.mapAttrs (
    _system:
    b.mapAttrs (
      _name: app: {
        inherit (app) type program;
        description = app.meta.description or null;
      }
    )
  );

  checks = b.mapAttrs (
    _system:
    b.mapAttrs (
      _name: c:
      {
        builder = c.stub.builder;
        out = c.outPath;
      }
      // (
        if c.stub.builder == "buildRustPackage" then
          rustPackage c
        else if c.stub.builder == "runCommand" then
          {
            script = c.stub.args.script;
            nativeBuildInputs = map (d: d.pname or d.name) (c.stub.args.env.nativeBuildInputs or [ ]);
          }
        else
          { }
      )
    )
  );

  devShells = b.mapAttrs (
    _system:
    b.mapAttrs (
      _name: s: {
        builder = s.stub.builder;
        packages = map (d: d.pname or d.name) (s.stub.args.packages or [ ]);
        nativeBuildInputs = map (d: d.pname or d.name) (s.stub.args.nativeBuildInputs or [ ]);
      }
    )
  );

  formatter = b.mapAttrs (
    _system: f: {
      name = f.pname or f.name;
      mainProgram = f.meta.mainProgram or null;
    }
  );
}
