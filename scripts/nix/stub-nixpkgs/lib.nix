# A small stand-in for nixpkgs' lib, for scripts/check-flake only.
#
# It implements the functions flake.nix and scripts/nix/home-manager.nix use,
# with nixpkgs' names and calling conventions, and a simplified module system
# (evalModules) that keeps the behaviour the checks rely on:
#   - options are declared with mkOption / mkEnableOption and merged by type;
#   - mkIf / mkMerge / mkOverride (mkDefault, mkForce) work at any depth;
#   - like nixpkgs, mkIf is pushed down to the leaves *without* looking at its
#     condition, so defining an option that was never declared is an error
#     even under `mkIf false` ("The option `…' does not exist");
#   - definitions are type-checked (bool, str, int, ints.unsigned,
#     strMatching, package, nullOr, listOf, attrsOf, anything).
# Not implemented: submodules, _module.args (use specialArgs), option
# merging of duplicate declarations, mkOrder/mkBefore/mkAfter, warnings and
# assertions, freeform modules.
let
  b = builtins;

  showPath = path: b.concatStringsSep "." path;

  showValue =
    v:
    if b.isString v || b.isInt v || b.isBool v || v == null || b.isFloat v then
      b.toJSON v
    else if b.isList v then
      "[ ${b.concatStringsSep " " (map showValue v)} ]"
    else if b.isAttrs v && (v.type or null) == "derivation" then
      "<derivation ${v.name or "?"}>"
    else if b.isAttrs v then
      "{ ${b.concatStringsSep " " (map (n: "${n} = ${showValue v.${n}};") (b.attrNames v))} }"
    else
      "<${b.typeOf v}>";

  lib = rec {
    # ---- lists, strings, attrsets -------------------------------------------------
    inherit (b)
      concatMap
      concatStringsSep
      concatLists
      elem
      filter
      mapAttrs
      attrNames
      attrValues
      ;
    genAttrs =
      names: f:
      b.listToAttrs (
        map (name: {
          inherit name;
          value = f name;
        }) names
      );
    optional = cond: x: if cond then [ x ] else [ ];
    optionals = cond: xs: if cond then xs else [ ];
    optionalAttrs = cond: attrs: if cond then attrs else { };
    optionalString = cond: s: if cond then s else "";
    hasPrefix = prefix: s: b.substring 0 (b.stringLength prefix) s == prefix;
    hasSuffix =
      suffix: s:
      let
        ls = b.stringLength s;
        lx = b.stringLength suffix;
      in
      ls >= lx && b.substring (ls - lx) lx s == suffix;
    splitString = sep: s: b.filter b.isString (b.split (escapeRegex sep) s);
    escapeRegex = s: b.replaceStrings [ "." "+" "*" "?" "(" ")" "[" "]" "{" "}" "|" "^" "$" "\\" ] [ "\\." "\\+" "\\*" "\\?" "\\(" "\\)" "\\[" "\\]" "\\{" "\\}" "\\|" "\\^" "\\$" "\\\\" ] s;
    unique = xs: b.foldl' (acc: x: if b.elem x acc then acc else acc ++ [ x ]) [ ] xs;
    assertMsg = pred: msg: pred || throw msg;
    attrByPath =
      path: default: set:
      if path == [ ] then
        set
      else if b.isAttrs set && set ? ${b.head path} then
        attrByPath (b.tail path) default set.${b.head path}
      else
        default;

    # ---- meta ------------------------------------------------------------------------
    licenses.mit = {
      spdxId = "MIT";
      shortName = "mit";
      fullName = "MIT License";
      free = true;
    };
    # Like nixpkgs' getExe, but an error (not a warning) without meta.mainProgram.
    getExe =
      x:
      if x ? meta.mainProgram then
        "${x}/bin/${x.meta.mainProgram}"
      else
        throw "stub lib.getExe: ${x.name or "<value>"} has no meta.mainProgram";
    literalExpression = text: {
      _type = "literalExpression";
      inherit text;
    };

    # ---- fileset (toSource, unions, union, maybeMissing) -----------------------------
    # A file set is { _type = "fileset"; paths = [ absolute path strings ]; };
    # toSource really copies the selected files into the store with builtins.path.
    fileset =
      let
        coerce =
          what: x:
          if b.isAttrs x && (x._type or null) == "fileset" then
            x
          else if b.isPath x then
            (
              if b.pathExists x then
                {
                  _type = "fileset";
                  paths = [ (toString x) ];
                }
              else
                throw "lib.fileset.${what}: path ${toString x} does not exist (use lib.fileset.maybeMissing)"
            )
          else
            throw "lib.fileset.${what}: expected a path or a file set, got a ${b.typeOf x}";
      in
      rec {
        maybeMissing =
          path:
          if !(b.isPath path) then
            throw "lib.fileset.maybeMissing: expected a path"
          else if b.pathExists path then
            coerce "maybeMissing" path
          else
            {
              _type = "fileset";
              paths = [ ];
            };
        unions = list: {
          _type = "fileset";
          paths = b.concatMap (x: (coerce "unions" x).paths) list;
        };
        union = x: y: unions [
          x
          y
        ];
        toSource =
          { root, fileset }:
          let
            rootStr = toString root;
            fs = coerce "toSource" fileset;
            outside = b.filter (p: p != rootStr && !(hasPrefix (rootStr + "/") p)) fs.paths;
          in
          assert assertMsg (b.isPath root) "lib.fileset.toSource: root must be a path";
          assert assertMsg (outside == [ ]) "lib.fileset.toSource: ${toString outside} not under root ${rootStr}";
          b.path {
            name = "source";
            path = root;
            filter =
              p: type:
              let
                ps = toString p;
              in
              b.any (
                f: ps == f || hasPrefix (f + "/") ps || (type == "directory" && hasPrefix (ps + "/") f)
              ) fs.paths;
          };
      };

    # ---- module system ---------------------------------------------------------------
    mkOption = attrs: attrs // { _type = "option"; };
    isOption = x: b.isAttrs x && (x._type or null) == "option";
    mkEnableOption =
      name:
      mkOption {
        type = types.bool;
        default = false;
        example = true;
        description = "Whether to enable ${name}.";
      };
    mkIf = condition: content: {
      _type = "if";
      inherit condition content;
    };
    mkMerge = contents: {
      _type = "merge";
      inherit contents;
    };
    mkOverride = priority: content: {
      _type = "override";
      inherit priority content;
    };
    mkOptionDefault = mkOverride 1500;
    mkDefault = mkOverride 1000;
    mkForce = mkOverride 50;

    types = rec {
      mkOptionType =
        {
          name,
          description ? name,
          check,
          merge ? mergeEqualOption,
        }:
        {
          _type = "option-type";
          inherit
            name
            description
            check
            merge
            ;
        };

      mergeEqualOption =
        loc: defs:
        let
          first = (b.head defs).value;
        in
        if b.all (d: d.value == first) defs then
          first
        else
          throw "The option `${showPath loc}' has conflicting definition values:${
            b.concatStringsSep "" (map (d: "\n- In `${d.file}': ${showValue d.value}") defs)
          }";

      bool = mkOptionType {
        name = "bool";
        description = "boolean";
        check = b.isBool;
      };
      str = mkOptionType {
        name = "str";
        description = "string";
        check = b.isString;
      };
      int = mkOptionType {
        name = "int";
        description = "signed integer";
        check = b.isInt;
      };
      ints = {
        unsigned = mkOptionType {
          name = "unsignedInt";
          description = "unsigned integer, meaning >=0";
          check = v: b.isInt v && v >= 0;
        };
        positive = mkOptionType {
          name = "positiveInt";
          description = "positive integer, meaning >0";
          check = v: b.isInt v && v > 0;
        };
      };
      strMatching =
        pattern:
        mkOptionType {
          name = "strMatching ${b.toJSON pattern}";
          description = "string matching the pattern ${pattern}";
          check = v: b.isString v && b.match pattern v != null;
        };
      package = mkOptionType {
        name = "package";
        description = "package";
        check = v: b.isAttrs v && (v.type or null) == "derivation";
      };
      anything = mkOptionType {
        name = "anything";
        check = _: true;
        merge =
          loc: defs:
          if b.length defs == 1 then
            (b.head defs).value
          else if b.all (d: b.isAttrs d.value && !(d.value ? _type) && (d.value.type or null) != "derivation") defs then
            mergeAttrDefs loc anything defs
          else
            mergeEqualOption loc defs;
      };
      nullOr =
        t:
        mkOptionType {
          name = "nullOr";
          description = "null or ${t.description}";
          check = v: v == null || t.check v;
          merge =
            loc: defs:
            let
              nulls = b.filter (d: d.value == null) defs;
            in
            if nulls == [ ] then
              t.merge loc defs
            else if b.length nulls == b.length defs then
              null
            else
              throw "The option `${showPath loc}' is defined both null and not null";
        };
      listOf =
        t:
        mkOptionType {
          name = "listOf";
          description = "list of ${t.description}";
          check = b.isList;
          merge =
            loc: defs:
            b.concatMap (
              d:
              map (
                v:
                if t.check v then
                  v
                else
                  throw "A definition for option `${showPath loc}' is not of type `${t.description}'. Definition value: ${showValue v} in `${d.file}'"
              ) d.value
            ) defs;
        };
      attrsOf =
        t:
        mkOptionType {
          name = "attrsOf";
          description = "attribute set of ${t.description}";
          check = b.isAttrs;
          merge = loc: defs: mergeAttrDefs loc t defs;
        };
    };

    # Resolves mkIf / mkMerge / mkOverride around one definition value into a
    # list of { file; value; priority; } (priority 100 = a plain definition).
    resolveDef =
      file: v:
      let
        t = if b.isAttrs v then v._type or null else null;
      in
      if t == "if" then
        (
          if v.condition then
            resolveDef file v.content
          else
            [ ]
        )
      else if t == "merge" then
        b.concatMap (resolveDef file) v.contents
      else if t == "override" then
        map (d: d // { inherit (v) priority; }) (resolveDef file v.content)
      else
        [
          {
            inherit file;
            value = v;
            priority = 100;
          }
        ];

    # Keeps the definitions of the best (lowest) priority, type-checks each, merges.
    mergeDefinitions =
      loc: type: defs:
      let
        best = b.foldl' (acc: d: if d.priority < acc then d.priority else acc) 99999 defs;
        kept = b.filter (d: d.priority == best) defs;
        checked = map (
          d:
          if type.check d.value then
            d
          else
            throw "A definition for option `${showPath loc}' is not of type `${type.description}'. Definition value: ${showValue d.value} in `${d.file}'"
        ) kept;
      in
      type.merge loc checked;

    # attrsOf-style merge: per attribute name, resolve properties and merge with `t`.
    mergeAttrDefs =
      loc: t: defs:
      let
        names = unique (b.concatMap (d: b.attrNames d.value) defs);
        perName = map (n: {
          name = n;
          defs = b.concatMap (d: if d.value ? ${n} then resolveDef d.file d.value.${n} else [ ]) defs;
        }) names;
      in
      b.listToAttrs (
        map (x: {
          inherit (x) name;
          value = mergeDefinitions (loc ++ [ x.name ]) t x.defs;
        }) (b.filter (x: x.defs != [ ]) perName)
      );

    evalModules =
      {
        modules,
        specialArgs ? { },
      }:
      let
        moduleArgs = {
          inherit lib config options;
        }
        // specialArgs;

        # Applies a module function to the arguments it names (as nixpkgs does),
        # normalises it to { file; options; config; } and follows imports.
        load =
          file: m:
          let
            isFile = b.isPath m || b.isString m;
            file' = if isFile then toString m else file;
            fn = if isFile then import m else m;
            raw = if b.isFunction fn then fn (b.intersectAttrs (b.functionArgs fn) moduleArgs) else fn;
            explicit = raw ? options || raw ? config || raw ? imports;
            imports = raw.imports or [ ];
          in
          [
            {
              file = file';
              options = if explicit then raw.options or { } else { };
              config =
                if explicit then
                  raw.config or { }
                else
                  removeAttrs raw [
                    "_file"
                    "key"
                  ];
            }
          ]
          ++ b.concatLists (
            b.genList (i: load "${file'}, import ${toString i}" (b.elemAt imports i)) (b.length imports)
          );

        allModules = b.concatLists (
          b.genList (i: load "<evalModules module ${toString i}>" (b.elemAt modules i)) (b.length modules)
        );

        mergeDecls =
          path: x: y:
          if isOption x || isOption y then
            throw "The option `${showPath path}' is declared more than once (the stub lib does not merge declarations)"
          else
            x // b.mapAttrs (n: v: if x ? ${n} then mergeDecls (path ++ [ n ]) x.${n} v else v) y;

        declarations = b.foldl' (acc: m: mergeDecls [ ] acc m.options) { } allModules;

        # Pushes one module's config down to option leaves: a list of
        # { file; path; value; }, where value keeps the mkIf/mkOverride wrappers
        # that enclosed it (their conditions are not evaluated here).
        pushDown =
          file: path: decls: v:
          let
            t = if b.isAttrs v then v._type or null else null;
          in
          if isOption decls then
            [ { inherit file path; value = v; } ]
          else if t == "merge" then
            b.concatMap (pushDown file path decls) v.contents
          else if t == "if" then
            map (d: d // { value = mkIf v.condition d.value; }) (pushDown file path decls v.content)
          else if t == "override" then
            map (d: d // { value = mkOverride v.priority d.value; }) (pushDown file path decls v.content)
          else if b.isAttrs v then
            b.concatMap (
              n:
              if decls ? ${n} then
                pushDown file (path ++ [ n ]) decls.${n} v.${n}
              else
                throw "The option `${showPath (path ++ [ n ])}' does not exist. Definition values:\n- In `${file}'"
            ) (b.attrNames v)
          else
            throw "The option `${showPath path}' does not exist; `${file}' defines it as ${showValue v}";

        definitions = b.concatMap (m: pushDown m.file [ ] declarations m.config) allModules;

        valueAt =
          path: opt:
          let
            defs = b.concatMap (d: resolveDef d.file d.value) (b.filter (d: d.path == path) definitions);
            withDefault =
              if defs != [ ] then
                defs
              else if opt ? default then
                [
                  {
                    file = "<default of ${showPath path}>";
                    value = opt.default;
                    priority = 1500;
                  }
                ]
              else
                throw "The option `${showPath path}' is used but not defined.";
          in
          mergeDefinitions path (opt.type or types.anything) withDefault;

        mkConfig =
          path: decls:
          if isOption decls then valueAt path decls else b.mapAttrs (n: mkConfig (path ++ [ n ])) decls;

        mkOptions =
          path: decls:
          if isOption decls then
            decls
            // {
              loc = path;
              value = attrByPath path (throw "unreachable") config;
              isDefined = b.any (d: d.path == path) definitions || decls ? default;
            }
          else
            b.mapAttrs (n: mkOptions (path ++ [ n ])) decls;

        config = mkConfig [ ] declarations;
        options = mkOptions [ ] declarations;
      in
      {
        # Like nixpkgs (_module.check), reading config first checks that every
        # definition targets a declared option.
        config = b.seq (b.length (map (d: d.path) definitions)) (b.deepSeq (map (d: d.path) definitions) config);
        inherit options;
        _type = "configuration";
      };
  };
in
lib
