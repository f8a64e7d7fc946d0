/// The service's OpenAPI 3.1 description, served at `GET /openapi.json`: docs/openapi.json, which
/// `ServeTests` checks is what the server answers, and that every path in it is a route.
enum OpenAPIDocument {
    static let json = #"""
        {
          "components": {
            "schemas": {
              "Check": {
                "properties": {
                  "checks": {
                    "additionalProperties": {
                      "type": "string"
                    },
                    "type": "object"
                  },
                  "status": {
                    "type": "string"
                  }
                },
                "required": [
                  "status"
                ],
                "type": "object"
              },
              "Error": {
                "properties": {
                  "error": {
                    "properties": {
                      "lines": {
                        "description": "One line per rule broken, each naming its JSON path.",
                        "items": {
                          "type": "string"
                        },
                        "type": "array"
                      },
                      "message": {
                        "description": "The first line.",
                        "type": "string"
                      },
                      "status": {
                        "type": "integer"
                      }
                    },
                    "required": [
                      "status",
                      "message",
                      "lines"
                    ],
                    "type": "object"
                  }
                },
                "required": [
                  "error"
                ],
                "type": "object"
              },
              "RenderAnswer": {
                "properties": {
                  "audio": {
                    "type": "string"
                  },
                  "captions": {
                    "type": "string"
                  },
                  "id": {
                    "pattern": "^[0-9a-f]{32}$",
                    "type": "string"
                  },
                  "timeline": {
                    "type": "string"
                  }
                },
                "required": [
                  "id",
                  "audio",
                  "timeline",
                  "captions"
                ],
                "type": "object"
              },
              "RenderRequest": {
                "additionalProperties": false,
                "properties": {
                  "options": {
                    "additionalProperties": false,
                    "properties": {
                      "bitrate": {
                        "description": "kb/s, for a lossy format.",
                        "maximum": 1000,
                        "minimum": 1,
                        "type": "integer"
                      },
                      "format": {
                        "default": "wav",
                        "enum": [
                          "wav",
                          "flac",
                          "mp3",
                          "opus",
                          "ogg",
                          "m4a",
                          "m4b"
                        ]
                      },
                      "quality": {
                        "description": "The format's variable-rate quality.",
                        "type": "number"
                      },
                      "seed": {
                        "description": "Default: drawn from the script's digest.",
                        "maximum": 9007199254740992,
                        "minimum": 0,
                        "type": "integer"
                      }
                    },
                    "type": "object"
                  },
                  "script": {
                    "description": "A script of any kind, as a script file holds it (docs/sessions.md).",
                    "type": "object"
                  }
                },
                "required": [
                  "script"
                ],
                "type": "object"
              },
              "SeedSpeechAnswer": {
                "properties": {
                  "data": {
                    "properties": {
                      "audio": {
                        "contentEncoding": "base64",
                        "description": "The MP3 clip.",
                        "type": "string"
                      }
                    },
                    "type": "object"
                  },
                  "error": {
                    "properties": {
                      "code": {
                        "type": "string"
                      },
                      "message": {
                        "type": "string"
                      }
                    },
                    "type": "object"
                  },
                  "success": {
                    "type": "boolean"
                  }
                },
                "required": [
                  "success"
                ],
                "type": "object"
              },
              "SeedSpeechRequest": {
                "properties": {
                  "text": {
                    "maxLength": 5000,
                    "minLength": 1,
                    "type": "string"
                  }
                },
                "required": [
                  "text"
                ],
                "type": "object"
              }
            },
            "securitySchemes": {
              "bearer": {
                "description": "Asked for only with `--token-file`.",
                "scheme": "bearer",
                "type": "http"
              }
            }
          },
          "info": {
            "description": "Sessions rendered to order: docs/serve.md.",
            "title": "render-session serve",
            "version": "0.1.0"
          },
          "openapi": "3.1.0",
          "paths": {
            "/livez": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Check"
                        }
                      }
                    },
                    "description": "Live."
                  }
                },
                "summary": "The process answers."
              }
            },
            "/metrics": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "text/plain": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    },
                    "description": "The metrics."
                  }
                },
                "summary": "Prometheus' text format: renders by outcome, render seconds, renders in flight, clips by source, rejected requests."
              }
            },
            "/openapi.json": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    },
                    "description": "OpenAPI 3.1."
                  }
                },
                "summary": "This document."
              }
            },
            "/readyz": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Check"
                        }
                      }
                    },
                    "description": "Ready."
                  },
                  "503": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Check"
                        }
                      }
                    },
                    "description": "Not ready: each check's reason."
                  }
                },
                "summary": "The cache and output folders each take a file."
              }
            },
            "/tts/synthesize": {
              "post": {
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/SeedSpeechRequest"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SeedSpeechAnswer"
                        }
                      }
                    },
                    "description": "The clip."
                  },
                  "400": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SeedSpeechAnswer"
                        }
                      }
                    },
                    "description": "`text` is missing, empty, blank or over 5,000 characters (`VALIDATION_ERROR`)."
                  },
                  "401": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "`--token-file` is set and the bearer token is missing or wrong."
                  },
                  "413": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SeedSpeechAnswer"
                        }
                      }
                    },
                    "description": "The body is over 64 KiB."
                  },
                  "500": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SeedSpeechAnswer"
                        }
                      }
                    },
                    "description": "The clip could not be had (`TTS_ERROR`)."
                  },
                  "503": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SeedSpeechAnswer"
                        }
                      }
                    },
                    "description": "The speech provider is unavailable (`TTS_ERROR`)."
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "Seed 000's TTS proxy: one clip in the server's voice, from its cache."
              }
            },
            "/v1/renders": {
              "post": {
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/RenderRequest"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/RenderAnswer"
                        }
                      }
                    },
                    "description": "An identical request had rendered it already."
                  },
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/RenderAnswer"
                        }
                      }
                    },
                    "description": "Rendered; `Location` names the audio."
                  },
                  "401": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "`--token-file` is set and the bearer token is missing or wrong."
                  },
                  "413": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "The body is over 1 MiB."
                  },
                  "422": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "The body, an option or the script breaks a rule."
                  },
                  "500": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "The render failed for a reason of the server's."
                  },
                  "503": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "Every render slot and queue place is taken (`Retry-After`), or the speech provider is unavailable."
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "Render a script, once per distinct request."
              }
            },
            "/v1/renders/{name}": {
              "get": {
                "parameters": [
                  {
                    "description": "`ID.EXT`: the id (32 lowercase hexadecimal digits) and one of wav, flac, mp3, opus, ogg, m4a, m4b, timeline.json, vtt, chapters.vtt.",
                    "in": "path",
                    "name": "name",
                    "required": true,
                    "schema": {
                      "pattern": "^[0-9a-f]{32}\\.(wav|flac|mp3|opus|ogg|m4a|m4b|timeline\\.json|vtt|chapters\\.vtt)$",
                      "type": "string"
                    }
                  },
                  {
                    "description": "One byte range (RFC 9110): `bytes=0-99`, `bytes=1000-`, `bytes=-500`.",
                    "in": "header",
                    "name": "Range",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "*/*": {
                        "schema": {
                          "contentMediaType": "application/octet-stream",
                          "type": "string"
                        }
                      }
                    },
                    "description": "The whole file.",
                    "headers": {
                      "Accept-Ranges": {
                        "description": "`bytes`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "Cache-Control": {
                        "description": "`public, max-age=31536000, immutable`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "ETag": {
                        "description": "Strong: the name, whose bytes never change.",
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "206": {
                    "description": "The bytes the range asked for, with `Content-Range: bytes FIRST-LAST/SIZE`.",
                    "headers": {
                      "Accept-Ranges": {
                        "description": "`bytes`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "Cache-Control": {
                        "description": "`public, max-age=31536000, immutable`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "ETag": {
                        "description": "Strong: the name, whose bytes never change.",
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "304": {
                    "description": "`If-None-Match` named the ETag."
                  },
                  "401": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "`--token-file` is set and the bearer token is missing or wrong."
                  },
                  "404": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "Not a render's file name, or no such render."
                  },
                  "416": {
                    "description": "The range starts at or past the end: `Content-Range: bytes */SIZE`."
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "A render's audio, timeline or captions."
              },
              "head": {
                "parameters": [
                  {
                    "description": "`ID.EXT`: the id (32 lowercase hexadecimal digits) and one of wav, flac, mp3, opus, ogg, m4a, m4b, timeline.json, vtt, chapters.vtt.",
                    "in": "path",
                    "name": "name",
                    "required": true,
                    "schema": {
                      "pattern": "^[0-9a-f]{32}\\.(wav|flac|mp3|opus|ogg|m4a|m4b|timeline\\.json|vtt|chapters\\.vtt)$",
                      "type": "string"
                    }
                  },
                  {
                    "description": "One byte range (RFC 9110): `bytes=0-99`, `bytes=1000-`, `bytes=-500`.",
                    "in": "header",
                    "name": "Range",
                    "required": false,
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The whole file's headers.",
                    "headers": {
                      "Accept-Ranges": {
                        "description": "`bytes`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "Cache-Control": {
                        "description": "`public, max-age=31536000, immutable`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "ETag": {
                        "description": "Strong: the name, whose bytes never change.",
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "206": {
                    "description": "The bytes the range asked for, with `Content-Range: bytes FIRST-LAST/SIZE`.",
                    "headers": {
                      "Accept-Ranges": {
                        "description": "`bytes`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "Cache-Control": {
                        "description": "`public, max-age=31536000, immutable`.",
                        "schema": {
                          "type": "string"
                        }
                      },
                      "ETag": {
                        "description": "Strong: the name, whose bytes never change.",
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "304": {
                    "description": "`If-None-Match` named the ETag."
                  },
                  "401": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "`--token-file` is set and the bearer token is missing or wrong."
                  },
                  "404": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    },
                    "description": "Not a render's file name, or no such render."
                  },
                  "416": {
                    "description": "The range starts at or past the end: `Content-Range: bytes */SIZE`."
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ],
                "summary": "The headers of a render's file."
              }
            }
          },
          "servers": [
            {
              "url": "http://127.0.0.1:8080"
            }
          ]
        }
        """#
}
