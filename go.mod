module github.com/osslbuild/osslbuild

go 1.26.8

tool github.com/magefile/mage

require (
	github.com/CycloneDX/cyclonedx-go v0.12.0
	github.com/ProtonMail/go-crypto v1.5.2
	github.com/bluekeyes/go-gitdiff v0.9.0
	github.com/hashicorp/go-version v1.9.0
	github.com/magefile/mage v1.17.2
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/rhysd/actionlint v1.7.12
	github.com/rogpeppe/go-internal v1.16.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/schollz/progressbar/v3 v3.19.1
	go.yaml.in/yaml/v4 v4.0.0-rc.3
	golang.org/x/arch v0.33.0
	golang.org/x/term v0.44.0
)

require (
	github.com/bmatcuk/doublestar/v4 v4.10.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/cloudflare/circl v1.6.3 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/mattn/go-runewidth v0.0.21 // indirect
	github.com/mattn/go-shellwords v1.0.12 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	golang.org/x/crypto v0.41.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	golang.org/x/tools v0.35.0 // indirect
)
