module github.com/osslbuild/osslbuild

go 1.26.8

tool github.com/magefile/mage

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/ProtonMail/go-crypto v1.5.2
	github.com/bluekeyes/go-gitdiff v0.9.0
	github.com/hashicorp/go-version v1.9.0
	github.com/magefile/mage v1.17.2
	github.com/schollz/progressbar/v3 v3.19.1
	golang.org/x/term v0.44.0
)

require (
	github.com/CycloneDX/cyclonedx-go v0.12.0 // indirect
	github.com/cloudflare/circl v1.6.3 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/crypto v0.41.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
)
