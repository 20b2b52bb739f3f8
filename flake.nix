{
  description = "conversation-search: MCP server that lets coding agents search their own past sessions (BM25 over JSONL transcripts)";

  # The only input. flake.lock pins it to a nixos-26.05 revision.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-26.05";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;

      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      cargoToml = builtins.fromTOML (builtins.readFile ./Cargo.toml);
      pname = cargoToml.package.name;
      inherit (cargoToml.package) version;
      mainProgram = "conversation-search";

      # Only what `cargo build` / `cargo test` need: editing flake.nix, scripts/,
      # README.md or CI files does not change the source hash and so does not
      # trigger a rebuild. tests/ need fixtures/ (and spawn the built binary);
      # the tests that read ../shared/samples skip when it is absent (as in the
      # sandbox). maybeMissing: fixtures/ and build.rs may not exist.
      src = lib.fileset.toSource {
        root = ./.;
        fileset = lib.fileset.unions [
          ./Cargo.toml
          ./Cargo.lock
          ./src
          (lib.fileset.maybeMissing ./build.rs)
          (lib.fileset.maybeMissing ./tests)
          (lib.fileset.maybeMissing ./fixtures)
          (lib.fileset.maybeMissing ./benches)
          (lib.fileset.maybeMissing ./examples)
        ];
      };

      commonArgs = {
        inherit pname version src;
        cargoLock.lockFile = ./Cargo.lock;
        # Cargo.toml's distribution profile (fat LTO, one codegen unit), as scripts/build-static
        # builds; `release` is the quick profile for a fresh clone. The tests build with it too.
        buildType = "dist";
        # The black-box tests spawn the binary and write temp files.
        preCheck = ''
          export HOME=$(mktemp -d)
        '';
        meta = {
          description = cargoToml.package.description;
          license = lib.licenses.mit;
          inherit mainProgram;
          platforms = systems;
        };
      };

      # Shell completions and the man page, generated from the clap definitions by the
      # binary just built (static musl binaries run on their build host too).
      docsArgs = pkgs: {
        nativeBuildInputs = [ pkgs.installShellFiles ];
        postInstall = ''
          installShellCompletion --cmd ${mainProgram} \
            --bash <($out/bin/${mainProgram} completions bash) \
            --fish <($out/bin/${mainProgram} completions fish) \
            --zsh <($out/bin/${mainProgram} completions zsh)
          $out/bin/${mainProgram} man > ${mainProgram}.1
          installManPage ${mainProgram}.1
        '';
      };

      # Plain build against the platform's normal libc (glibc on Linux,
      # libSystem on Darwin).
      mkDynamic =
        pkgs:
        { doCheck }:
        pkgs.rustPlatform.buildRustPackage (commonArgs // docsArgs pkgs // { inherit doCheck; });

      # Fully static musl build.
      #
      # Why pkgsStatic (and not pkgsCross.musl64 + `-C target-feature=+crt-static`):
      # pkgsStatic is "the same platform, but musl and static" for whatever system
      # it is evaluated on, so one expression gives static binaries on both
      # x86_64-linux and aarch64-linux (pkgsCross.musl64 is x86_64 only), and its
      # whole stdenv (C compiler, libc, any C dependency) links statically, with
      # rustc's musl target defaulting to crt-static — no hand-passed RUSTFLAGS.
      # x86_64/aarch64 glibc hosts can execute the musl binaries, so nixpkgs keeps
      # doCheck on and the test suite runs against the static binary in the build.
      mkStatic =
        pkgs:
        pkgs.pkgsStatic.rustPlatform.buildRustPackage (
          commonArgs // docsArgs pkgs.pkgsStatic // { doCheck = true; }
        );

      packagesFor =
        pkgs:
        let
          dynamic = mkDynamic pkgs { doCheck = false; };
          # Static only where it makes sense: Linux. Darwin cannot link fully
          # statically (libSystem), so it gets the normal build, tested.
          default = if pkgs.stdenv.hostPlatform.isLinux then mkStatic pkgs else mkDynamic pkgs { doCheck = true; };
        in
        {
          inherit default dynamic;
          ${pname} = default;
        };
    in
    {
      packages = forAllSystems packagesFor;

      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = lib.getExe self.packages.${pkgs.stdenv.hostPlatform.system}.default;
          meta.description = "Run the conversation-search MCP server (`nix run . -- serve`)";
        };
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [
            pkgs.cargo
            pkgs.rustc
            pkgs.clippy
            pkgs.rustfmt
            pkgs.rust-analyzer
          ];
          RUST_SRC_PATH = "${pkgs.rustPlatform.rustLibSrc}";
        };
      });

      checks = forAllSystems (
        pkgs:
        let
          system = pkgs.stdenv.hostPlatform.system;
        in
        {
          # `cargo test` runs inside the package build (doCheck = true).
          tests = self.packages.${system}.default;

          clippy = pkgs.rustPlatform.buildRustPackage (
            commonArgs
            // {
              pname = "${pname}-clippy";
              nativeBuildInputs = [ pkgs.clippy ];
              doCheck = false;
              buildPhase = ''
                runHook preBuild
                cargo clippy --all-targets --offline --locked -- -D warnings
                runHook postBuild
              '';
              installPhase = ''
                runHook preInstall
                touch $out
                runHook postInstall
              '';
            }
          );

          fmt =
            pkgs.runCommand "${pname}-fmt"
              {
                nativeBuildInputs = [
                  pkgs.cargo
                  pkgs.rustfmt
                ];
              }
              ''
                export HOME=$(mktemp -d)
                cp -r ${src} source
                chmod -R u+w source
                cd source
                cargo fmt --all -- --check
                touch $out
              '';
        }
      );

      formatter = forAllSystems (pkgs: pkgs.nixfmt);

      # Home Manager module: programs.conversation-search. See scripts/nix/home-manager.nix.
      homeManagerModules.default = import ./scripts/nix/home-manager.nix { inherit self; };
      homeModules.default = self.homeManagerModules.default;
    };
}
