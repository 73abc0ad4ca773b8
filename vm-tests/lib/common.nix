# What every VM test node shares: the Quire module, the mcp-call client, curl and jq.
# Not a test itself (vm-tests/lib/ is not collected into checks).
{ self, pkgs }:
{
  mcpCall = pkgs.writers.writePython3Bin "mcp-call" { flakeIgnore = [ "E501" ]; }
    (builtins.readFile ./mcp-call.py);

  node = { pkgs, ... }: {
    imports = [ self.nixosModules.default ];
    services.quire.package = self.packages.${pkgs.stdenv.hostPlatform.system}.default;
    environment.systemPackages = [ pkgs.curl pkgs.jq ];
    virtualisation.memorySize = 1024;
  };
}
